"""The indexes behind the analysis's speed (a million-event trace in seconds) give the answers
of the plain scans they replace: the job a worker served at a clock, a path's read in a
request, the causal chain of a reached point, normalised paths, a worker's job pairs; and the
garbage collector's pause restores its state."""

import random

from distea import Change, build_order, impact, read_logs
from distea._model import Comm, Process
from distea._order import SUPER_SOURCE, _last_request, _read_at
from distea._query import normalise_path


def _naive_last_request(proc, clock):
    served = [c.job for c in proc.recvs if c.job and c.clock <= clock]
    return served[-1] if served else None


def _naive_read_at(proc, path, since):
    later = [c for p, c in proc.reads if p == path and c >= since]
    return min(later) if later else proc.opens.get(path)


def test_last_request_is_the_scan_it_replaces():
    rng = random.Random(7)
    for trial in range(200):
        proc = Process("w", "worker", "w.jsonl")
        clocks = [rng.randrange(30) for _ in range(rng.randrange(8))]
        if trial % 2:
            clocks.sort()  # as parsed; the unsorted half checks the fallback
        proc.recvs = [
            Comm(f"m{i}", c, None, rng.choice([None, "", f"J{i}"])) for i, c in enumerate(clocks)
        ]
        for clock in range(-1, 32):
            assert _last_request(proc, clock) == _naive_last_request(proc, clock)
        proc.recvs.append(Comm("late", 40, None, "late"))  # the index follows a grown list
        assert _last_request(proc, 41) == _naive_last_request(proc, 41) == "late"


def test_read_at_is_the_scan_it_replaces():
    rng = random.Random(11)
    for _ in range(200):
        proc = Process("w", "worker", "w.jsonl")
        for _ in range(rng.randrange(10)):
            path, clock = rng.choice("abc"), rng.randrange(20)
            proc.opens.setdefault(path, clock)
            proc.reads.append((path, clock))
        for path in "abcd":
            for since in range(-1, 22):
                assert _read_at(proc, path, since) == _naive_read_at(proc, path, since)


def _naive_chain(reach, name, clock):
    """Reach.chain as it was before it was indexed and memoised."""
    order = reach.order
    line = order.timelines[name]
    for index, (n, c) in enumerate(reach.sources):
        if n == name and c <= clock:
            until = line.until(c)
            if until is None or clock < until:
                return index, []
    node = line.segment(clock)
    steps = []
    while node in reach.preds:
        prev = reach.preds[node]
        if prev == SUPER_SOURCE:
            if node in reach.entry_why:
                steps.append(reach.entry_why[node])
            return reach.entry.get(node), steps[::-1]
        why = order.edge_why.get((prev, node))
        if why:
            steps.append(why)
        node = prev
    return None, steps[::-1]


def _pipeline(logs, states):
    """A worker serving six requests (state evidence ``states`` or none), a script job
    reading the worker's last output, a logger log tying them together."""
    fn = logs.fn
    records, clock = [], 0
    for i in range(6):
        job = f"W[{i}.txt]"
        records.append({"k": "recv", "m": f"inv{i}", "c": clock + 1, "from": "mgr", "job": job})
        records.append({"k": "open", "p": f"in{i % 2}.txt", "c": clock + 2})
        records.append(fn(f"lib.f{i % 3}", clock + 2, clock + 3))
        if states is not None:
            records.append({"k": "state", "c": clock + 4, "job": job, "w": states[i], "e": "x"})
        records.append({"k": "send", "m": f"done{i}", "c": clock + 5, "to": "mgr", "job": job})
        clock += 6
    records.append({"k": "end", "c": clock + 1, "mode": "settrace", "complete": True})
    logs.process("worker:w1", records, role="worker", worker_id="w1")
    jobs = [
        {
            "rule": "W",
            "wildcards": {},
            "input": [[f"in{i % 2}.txt", "h"]],
            "output": [[f"{i}.txt", "h"]],
        }
        for i in range(6)
    ]
    jobs.append(
        {"rule": "K", "wildcards": {}, "input": [["5.txt", "h"]], "output": [["k.txt", "h"]]}
    )
    logs.logger(jobs)
    logs.process("script:k", [fn("lib.f1", 1, 2), {"k": "end", "c": 3}], job="K[k.txt]")


def test_chains_are_the_walks_they_replace(logs):
    for states in (None, [True, False, None, False, True, False]):
        _pipeline(logs, states)
        order = build_order(read_logs(logs.root))
        for sources in ([("worker:w1", 2)], [("worker:w1", 14), ("job:W[0.txt]#start", 0)]):
            reach = order.reach(sources)
            for name, line in order.timelines.items():
                for clock in {0, 1, 2, 7, 14, 20, 40, *line.starts}:
                    want = _naive_chain(reach, name, clock)
                    assert reach.chain(name, clock) == want
                    assert reach.chain(name, clock) == want  # from the memo, the same


def test_worker_without_evidence_pairs_every_earlier_job_with_every_later_one(logs):
    _pipeline(logs, None)
    order = build_order(read_logs(logs.root))
    served = [f"W[{i}.txt]" for i in range(6)]
    pairs = [(a, b) for i, a in enumerate(served) for b in served[i + 1 :]]
    kinds = order.edge_kind
    assert all(kinds[p] in ("state", "file") for p in pairs)
    # File pairs found first keep their kind (setdefault semantics).
    assert kinds[("W[5.txt]", "K[k.txt]")] == "file"
    state_pairs = [p for p, kind in kinds.items() if kind == "state"]
    assert state_pairs == [p for p in pairs if p in state_pairs]  # in the loop's order


def test_normalise_path_is_pure_string_work():
    cases = [("./data/C.csv", "/wf"), ("/wf/data/../data/C.csv", "/wf"), ("/wf/data/C.csv", None),
             ("/other/C.csv", "/wf"), ("/wf", "/wf/"), ("a//b/", None)]  # fmt: skip
    for path, workdir in cases * 2:  # the second round from the cache
        assert normalise_path(path, workdir) == normalise_path.__wrapped__(path, workdir)
    assert normalise_path("/wf/data/C.csv", "/wf") == "data/C.csv"


def test_function_query_matches_ids_outside_the_table(logs):
    """A hand-built process whose ids are not from the trace's table: the plain isin path."""
    _pipeline(logs, None)
    order = build_order(read_logs(logs.root))
    proc = order.trace.processes["script:k"]
    before = impact(order, [Change.parse("func:lib.f1")])
    assert any(n == "script:k" for n, _, _ in before.sources)
    proc.fn_ids[0] = len(order.trace.functions) + 5  # no longer lib.f1, nor any known id
    proc.__dict__.pop("_arrays", None)
    after = impact(order, [Change.parse("func:lib.f1")])
    assert not any(n == "script:k" for n, _, _ in after.sources)


def test_gc_paused_restores_the_collector_state():
    import gc

    from distea._model import gc_paused

    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block leaves it to the outer one
    assert gc.isenabled()
    try:
        with gc_paused():
            raise KeyError("x")
    except KeyError:
        pass
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()  # was off before: stays off
    finally:
        gc.enable()
