"""Readable explanations (issue 15, part 5): chains name jobs, a worker's carried state is a
step of its own and counts only when the worker's run-time evidence says it could carry the
change, and the report's graph shows every kind of edge."""

from distea import Change, analyse, build_order, read_logs
from distea._report import markdown


def _job(rule, out, inputs=(), **wildcards):
    return {"rule": rule, "wildcards": wildcards, "input": [[p, "h"] for p in inputs],
            "output": [[out, "h"]]}  # fmt: skip


def _worker(logs, written):
    """A sticky worker serving J[0..3] in order; ``lib.f`` runs in request 1 only; after each
    request the worker logged whether its carried state changed (``written[i]``)."""
    fn = logs.fn
    records = []
    clock = 0
    for i in range(4):
        job = f"J[{i}.txt]"
        clock += 1
        records.append({"k": "recv", "m": f"inv{i}", "c": clock, "from": "manager", "job": job})
        clock += 1
        records.append(fn("lib.handler", clock, clock + 2))
        if i == 1:
            records.append(fn("lib.f", clock + 1, clock + 1))
        clock += 3
        if written is not None:
            evidence = "the carried state's digest changed" if written[i] else "did not change"
            records.append({"k": "state", "c": clock, "job": job, "w": written[i], "e": evidence})
        clock += 1
        records.append({"k": "send", "m": f"done{i}", "c": clock, "to": "manager", "job": job})
    records.append({"k": "end", "c": clock + 1, "mode": "settrace", "complete": True})
    logs.process("worker:w1:vm:4242", records, role="worker", worker_id="w1", host="vm", pid=4242)
    logs.logger([_job("J", f"{i}.txt", i=i) for i in range(4)] + [_job("K", "k.txt", ["3.txt"])])
    logs.process("script:vm:77", [fn("lib.k", 1, 2), {"k": "end", "c": 3}], job="K[k.txt]")


def test_chains_name_jobs_not_processes(logs):
    """Why: chains named processes by host and pid (``script:vm:11008 exited``)."""
    _worker(logs, written=[True, True, True, True])
    result = analyse(logs.root, [Change.parse("func:lib.f")])
    text = " ".join(step for item in result.jobs + result.functions for step in item.chain)
    assert "vm:4242" not in text and "script:vm:77" not in text
    chain = next(j.chain for j in result.jobs if j.name == "K[k.txt]")
    assert chain[0] == "func:lib.f first ran in worker w1 (serving J[1.txt])"
    assert any("file 3.txt written by J[3.txt], read by K[k.txt]" in step for step in chain)
    assert chain[-1] == "job K[k.txt] ended"


def test_state_carry_over_is_a_step_with_its_evidence(logs):
    """Why: a worker's state was assumed to carry over with no step in the chain saying so."""
    _worker(logs, written=[True, True, True, True])
    result = analyse(logs.root, [Change.parse("func:lib.f")])
    assert {j.name for j in result.jobs} == {"J[1.txt]", "J[2.txt]", "J[3.txt]", "K[k.txt]"}
    chain = next(j.chain for j in result.jobs if j.name == "J[3.txt]")
    assert any("job J[1.txt] changed worker w1's state (the carried state's digest changed)"
               in step for step in chain)  # fmt: skip
    assert any("worker w1's state carried the change to job J[3.txt]" in s for s in chain)


def test_state_that_did_not_change_carries_nothing(logs):
    """Precision: the worker showed that request 1 left its state unchanged, so the requests
    after it are not impacted (they were, before, whatever the state did)."""
    _worker(logs, written=[True, False, False, False])
    result = analyse(logs.root, [Change.parse("func:lib.f")])
    assert {j.name for j in result.jobs} == {"J[1.txt]"}
    functions = result.names("function")
    assert ("lib.handler", "J[1.txt]") in functions
    assert ("lib.handler", "J[2.txt]") not in functions


def test_state_changed_later_by_an_impacted_request_still_carries(logs):
    """A request reached through the state (J2) that writes it again keeps carrying."""
    _worker(logs, written=[False, True, False, False])
    result = analyse(logs.root, [Change.parse("func:lib.f")])
    assert {j.name for j in result.jobs} == {"J[1.txt]", "J[2.txt]", "J[3.txt]", "K[k.txt]"}


def test_without_evidence_the_state_counts_as_carried(logs):
    """Older logs (no state records): conservative, as before."""
    _worker(logs, written=None)
    result = analyse(logs.root, [Change.parse("func:lib.f")])
    assert {j.name for j in result.jobs} == {"J[1.txt]", "J[2.txt]", "J[3.txt]", "K[k.txt]"}


def test_graph_shows_file_and_state_edges(logs, tmp_path):
    """Why: the PNG drew only file edges (an impacted node with no impacted predecessor)."""
    from distea._report import job_edges

    _worker(logs, written=[True, True, True, True])
    order = build_order(read_logs(logs.root))
    kinds = job_edges(order)
    assert kinds[("J[3.txt]", "K[k.txt]")] == "file"
    assert kinds[("J[1.txt]", "J[2.txt]")] == "state"
    from distea import impact

    result = impact(order, [Change.parse("func:lib.f")])
    report = markdown(order, result, tmp_path / "r.md")
    assert (tmp_path / "r.png").stat().st_size > 1000
    assert "![job graph](r.png)" in report.read_text()


def test_template_built_before_the_change_arrived_does_not_carry_it(logs):
    """The state is built at the start of J0, before J0 reads the changed file: the build
    wrote untainted data, and the rest of J0 left the state unchanged."""
    fn = logs.fn
    records = [
        {"k": "recv", "m": "inv0", "c": 1, "from": "manager", "job": "J[0.txt]"},
        {"k": "tmpl", "n": "model", "c": 2},
        fn("lib.build", 3, 3),
        {"k": "state", "c": 4, "job": "J[0.txt]", "w": True, "e": "model built"},
        {"k": "open", "p": "in0.txt", "c": 5},
        fn("lib.handler", 6, 6),
        {"k": "state", "c": 7, "job": "J[0.txt]", "w": False, "e": "did not change"},
        {"k": "send", "m": "done0", "c": 8, "to": "manager", "job": "J[0.txt]"},
        {"k": "recv", "m": "inv1", "c": 9, "from": "manager", "job": "J[1.txt]"},
        fn("lib.handler", 10, 10),
        {"k": "state", "c": 11, "job": "J[1.txt]", "w": False, "e": "did not change"},
        {"k": "send", "m": "done1", "c": 12, "to": "manager", "job": "J[1.txt]"},
        {"k": "end", "c": 13, "mode": "settrace", "complete": True},
    ]  # fmt: skip
    logs.process("worker:w1:vm:1", records, role="worker", worker_id="w1")
    logs.logger([_job("J", "0.txt", ["in0.txt"], i=0), _job("J", "1.txt", ["in1.txt"], i=1)])
    result = analyse(logs.root, [Change.parse("file:in0.txt")])
    assert {j.name for j in result.jobs} == {"J[0.txt]"}
    template = analyse(logs.root, [Change.parse("func:lib.build")])
    assert {j.name for j in template.jobs} == {"J[0.txt]", "J[1.txt]"}


def test_graph_has_message_edges_between_jobs(logs):
    """Two traced jobs talking directly (a service): a message edge in the job graph."""
    from distea._report import job_edges

    logs.logger([_job("A", "a.txt"), _job("B", "b.txt")])
    fn = logs.fn
    logs.process("pA", [fn("lib.f", 1, 1), {"k": "send", "m": "x", "c": 2}], job="A[a.txt]")
    logs.process("pB", [{"k": "recv", "m": "x", "c": 3}, fn("lib.g", 4, 4)], job="B[b.txt]")
    order = build_order(read_logs(logs.root))
    assert job_edges(order) == {("A[a.txt]", "B[b.txt]"): "message"}
    result = analyse(logs.root, [Change.parse("func:lib.f")])
    assert {j.name for j in result.jobs} == {"A[a.txt]", "B[b.txt]"}


def test_function_run_again_in_a_later_request_is_a_source_there_too(logs):
    """Regression (found by the generated-mutant evaluation): the state did not change, but
    the changed function runs again in a later request; that request is impacted itself."""
    fn = logs.fn
    records = []
    clock = 0
    for i in range(3):
        job = f"J[{i}.txt]"
        clock += 1
        records.append({"k": "recv", "m": f"inv{i}", "c": clock, "from": "manager", "job": job})
        clock += 1
        if i != 1:
            records.append(fn("lib.model.score", clock, clock))
        clock += 1
        records.append({"k": "state", "c": clock, "job": job, "w": False, "e": "unchanged"})
        clock += 1
        records.append({"k": "send", "m": f"done{i}", "c": clock, "to": "manager", "job": job})
    records.append({"k": "end", "c": clock + 1, "mode": "settrace", "complete": True})
    logs.process("worker:w1:vm:1", records, role="worker", worker_id="w1")
    logs.logger([_job("J", f"{i}.txt", i=i) for i in range(3)])
    result = analyse(logs.root, [Change.parse("func:lib.model.score")])
    assert {j.name for j in result.jobs} == {"J[0.txt]", "J[2.txt]"}
    chain = next(j.chain for j in result.jobs if j.name == "J[2.txt]")
    assert chain[0] == "func:lib.model.score ran again in worker w1 (serving J[2.txt])"


def test_shared_file_read_by_two_requests_reaches_both(logs):
    """An upstream output read by two requests of one worker whose state did not change:
    each request's own read (logged per request) is reached by the file edge."""
    fn = logs.fn
    records = []
    clock = 0
    for i in range(2):
        job = f"J[{i}.txt]"
        clock += 1
        records.append({"k": "recv", "m": f"inv{i}", "c": clock, "from": "manager", "job": job})
        clock += 1
        records.append({"k": "open", "p": "ref.txt", "c": clock})
        clock += 1
        records.append(fn("lib.use", clock, clock))
        clock += 1
        records.append({"k": "state", "c": clock, "job": job, "w": False, "e": "unchanged"})
        clock += 1
        records.append({"k": "send", "m": f"done{i}", "c": clock, "to": "manager", "job": job})
    records.append({"k": "end", "c": clock + 1, "mode": "settrace", "complete": True})
    logs.process("worker:w1:vm:1", records, role="worker", worker_id="w1")
    logs.logger(
        [_job("R", "ref.txt", ["raw.txt"])]
        + [_job("J", f"{i}.txt", ["ref.txt"], i=i) for i in range(2)]
    )
    result = analyse(logs.root, [Change.parse("file:raw.txt")])
    assert {j.name for j in result.jobs} == {"R[ref.txt]", "J[0.txt]", "J[1.txt]"}
    assert ("lib.use", "J[1.txt]") in result.names("function")
