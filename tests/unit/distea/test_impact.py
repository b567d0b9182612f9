"""The impact algorithm on hand-built traces: files, messages, concurrency, sources."""

from distea import Change, analyse


def _job(rule, out, inputs=(), **wildcards):
    return {
        "rule": rule,
        "wildcards": wildcards,
        "input": [[p, "h"] for p in inputs],
        "output": [[out, "h"]],
    }


def _pipeline(logs):
    """A -> a.txt -> B -> b.txt -> C, each job a traced script; D independent."""
    logs.logger(
        [
            _job("A", "a.txt"),
            _job("B", "b.txt", ["a.txt"]),
            _job("C", "c.txt", ["b.txt"]),
            _job("D", "d.txt"),
        ]
    )
    fn = logs.fn
    logs.process(
        "pA",
        [fn("lib.f", 2, 3), fn("lib.early", 1, 1), fn("lib.late", 4, 6), {"k": "end", "c": 7}],
        job="A[a.txt]",
    )
    logs.process(
        "pB",
        [
            fn("lib.setup", 1, 2),
            {"k": "open", "p": "a.txt", "c": 5},
            fn("lib.use", 6, 8),
            fn("lib.f", 9, 9),
            {"k": "end", "c": 10},
        ],
        job="B[b.txt]",
    )
    logs.process("pC", [fn("lib.g", 1, 2), {"k": "end", "c": 3}], job="C[c.txt]")
    logs.process("pD", [fn("lib.f", 1, 1), {"k": "end", "c": 50}], job="D[d.txt]")


def test_multi_hop_through_files(logs):
    """A change in A reaches C through two files; B's code before its read is untouched."""
    _pipeline(logs)
    logs.logger([_job("A", "a.txt"), _job("B", "b.txt", ["a.txt"]), _job("C", "c.txt", ["b.txt"])])
    result = analyse(logs.root, [Change.parse("func:lib.late")])
    assert {j.name for j in result.jobs} == {"A[a.txt]", "B[b.txt]", "C[c.txt]"}
    assert {o.name for o in result.outputs} == {"a.txt", "b.txt", "c.txt"}
    functions = result.names("function")
    assert ("lib.late", "A[a.txt]") in functions
    assert ("lib.f", "A[a.txt]") not in functions  # returned before lib.late started
    assert ("lib.use", "B[b.txt]") in functions  # after B read a.txt
    assert ("lib.setup", "B[b.txt]") not in functions  # before B read a.txt
    assert ("lib.g", "C[c.txt]") in functions
    chain = next(j.chain for j in result.jobs if j.name == "C[c.txt]")
    assert chain[0] == "func:lib.late first ran in job A[a.txt]"
    assert any("file a.txt" in step for step in chain)
    assert any("file b.txt" in step for step in chain)


def test_function_running_in_several_processes(logs):
    """lib.f runs in A, B and D: each is a source; D's job is impacted, its inputs are not."""
    _pipeline(logs)
    result = analyse(logs.root, [Change.parse("func:lib.f")])
    assert {j.name for j in result.jobs} == {"A[a.txt]", "B[b.txt]", "C[c.txt]", "D[d.txt]"}
    functions = result.names("function")
    assert ("lib.use", "B[b.txt]") in functions  # via a.txt from A, before B's own lib.f
    assert ("lib.setup", "B[b.txt]") not in functions


def _worker(logs, f_request):
    """A sticky worker serving jobs J0..J3 in order; ``lib.f`` first runs in request f_request."""
    fn = logs.fn
    records = []
    clock = 0
    for i in range(4):
        clock += 1
        records.append(
            {"k": "recv", "m": f"inv{i}", "c": clock, "from": "manager", "job": f"J[{i}.txt]"}
        )
        clock += 1
        records.append(fn("lib.handler", clock, clock + 2))
        if i >= f_request:
            records.append(fn("lib.f", clock + 1, clock + 1))
        clock += 3
        records.append(
            {"k": "send", "m": f"done{i}", "c": clock, "to": "manager", "job": f"J[{i}.txt]"}
        )
    records.append({"k": "end", "c": clock + 1})
    logs.process("worker:w1", records, role="worker")
    logs.logger([_job("J", f"{i}.txt", i=i) for i in range(4)])


def test_worker_requests_before_the_first_call_are_not_impacted(logs):
    """State carries across requests: jobs served from f's first call on are impacted."""
    _worker(logs, f_request=2)
    result = analyse(logs.root, [Change.parse("func:lib.f")])
    assert {j.name for j in result.jobs} == {"J[2.txt]", "J[3.txt]"}
    functions = result.names("function")
    assert ("lib.handler", "J[3.txt]") in functions
    assert ("lib.handler", "J[1.txt]") not in functions


def test_concurrent_process_with_larger_clock_is_not_impacted(logs):
    """Two workers never talk: Lamport comparison would link them, happens-before does not."""
    fn = logs.fn
    logs.logger([_job("J", "a.txt"), _job("K", "b.txt")])
    logs.process(
        "worker:w1",
        [
            {"k": "recv", "m": "m1", "c": 1, "job": "J[a.txt]"},
            fn("lib.f", 2, 3),
            {"k": "send", "m": "d1", "c": 4, "job": "J[a.txt]"},
            {"k": "end", "c": 5},
        ],
        role="worker",
    )
    logs.process(
        "worker:w2",
        [
            {"k": "recv", "m": "m2", "c": 500, "job": "K[b.txt]"},
            fn("lib.g", 501, 502),
            {"k": "send", "m": "d2", "c": 503, "job": "K[b.txt]"},
            {"k": "end", "c": 504},
        ],
        role="worker",
    )
    result = analyse(logs.root, [Change.parse("func:lib.f")])
    assert {j.name for j in result.jobs} == {"J[a.txt]"}
    assert ("lib.g", "K[b.txt]") not in result.names("function")


def test_message_sent_before_the_source_does_not_carry_it(logs):
    """Within the source's own segment, only sends at or after the first call propagate."""
    fn = logs.fn
    logs.process(
        "p1",
        [
            {"k": "send", "m": "early", "c": 2},
            fn("lib.f", 3, 4),
            {"k": "send", "m": "late", "c": 5},
            {"k": "end", "c": 6},
        ],
        role="service",
    )
    logs.process(
        "p2",
        [{"k": "recv", "m": "early", "c": 3}, fn("lib.x", 4, 5), {"k": "end", "c": 6}],
        role="service",
    )
    logs.process(
        "p3",
        [{"k": "recv", "m": "late", "c": 6}, fn("lib.y", 7, 8), {"k": "end", "c": 9}],
        role="service",
    )
    result = analyse(logs.root, [Change.parse("func:lib.f")])
    functions = {name for name, _ in result.names("function")}
    assert "lib.y" in functions
    assert "lib.x" not in functions
    chain = next(f.chain for f in result.functions if f.name == "lib.y")
    assert chain == ("func:lib.f first ran in p1", "p1 sent message late to p3")


def test_transitive_messages(logs):
    """p1 -> p2 -> p3: the third process is reached although p1 never wrote to it."""
    fn = logs.fn
    logs.process("p1", [fn("lib.f", 1, 1), {"k": "send", "m": "a", "c": 2}], role="service")
    logs.process(
        "p2", [{"k": "recv", "m": "a", "c": 3}, {"k": "send", "m": "b", "c": 4}], role="service"
    )
    logs.process("p3", [{"k": "recv", "m": "b", "c": 5}, fn("lib.z", 6, 6)], role="service")
    result = analyse(logs.root, [Change.parse("func:lib.f")])
    assert ("lib.z", "p3") in result.names("function")


def test_param_read_only_by_some_jobs(logs):
    """A parameter change impacts the jobs that read it, not every job of the rule."""
    logs.logger([_job("S", "s1.txt", s=1), _job("S", "s2.txt", s=2)])
    logs.process(
        "p1",
        [{"k": "param", "n": "threshold", "c": 3, "job": "S[s1.txt]"}, {"k": "end", "c": 4}],
        job="S[s1.txt]",
    )
    logs.process("p2", [{"k": "end", "c": 4}], job="S[s2.txt]")
    result = analyse(logs.root, [Change.parse("param:S.threshold")])
    assert [j.name for j in result.jobs] == ["S[s1.txt]"]


def test_input_file_change_and_untraced_jobs(logs):
    """An untraced reader of a changed file is impacted from its start, with its descendants."""
    logs.logger(
        [_job("R", "r.txt", ["raw/x.txt"]), _job("T", "t.txt", ["r.txt"]), _job("U", "u.txt")]
    )
    result = analyse(logs.root, [Change.parse("file:raw/x.txt")])
    assert {j.name for j in result.jobs} == {"R[r.txt]", "T[t.txt]"}


def test_template_change(logs):
    fn = logs.fn
    logs.logger([_job("J", "a.txt"), _job("J", "b.txt")])
    logs.process(
        "worker:w1",
        [
            {"k": "recv", "m": "m1", "c": 1, "job": "J[a.txt]"},
            {"k": "tmpl", "n": "model", "c": 2},
            fn("tmpl.build", 3, 4),
            {"k": "send", "m": "d1", "c": 5, "job": "J[a.txt]"},
            {"k": "end", "c": 6},
        ],
        role="worker",
    )
    logs.process(
        "worker:w2",
        [
            {"k": "recv", "m": "m2", "c": 1, "job": "J[b.txt]"},
            {"k": "send", "m": "d2", "c": 5, "job": "J[b.txt]"},
            {"k": "end", "c": 6},
        ],
        role="worker",
    )
    result = analyse(logs.root, [Change.parse("template:model")])
    assert [j.name for j in result.jobs] == ["J[a.txt]"]


def test_rule_change_starts_at_every_job_of_the_rule(logs):
    _pipeline(logs)
    result = analyse(logs.root, [Change.parse("rule:B")])
    assert {j.name for j in result.jobs} == {"B[b.txt]", "C[c.txt]"}
    functions = result.names("function")
    assert ("lib.setup", "B[b.txt]") in functions  # the whole job runs differently
    assert not {f for f in functions if f[1] == "A[a.txt]"}


def test_function_not_traced_individually_falls_back_to_its_script_body(logs):
    """Under the wrap tracer a script's own functions are only seen as the script body."""
    logs.logger([_job("A", "a.txt"), _job("B", "b.txt", ["a.txt"])])
    fn = logs.fn
    logs.process("pA", [fn("scripts.agg.<module>", 1, 5), {"k": "end", "c": 6}], job="A[a.txt]")
    logs.process("pB", [fn("lib.g", 1, 2), {"k": "end", "c": 3}], job="B[b.txt]")
    result = analyse(logs.root, [Change.parse("func:scripts.agg.merge")])
    assert {j.name for j in result.jobs} == {"A[a.txt]", "B[b.txt]"}
    assert any("load of scripts.agg.<module>" in w for w in result.warnings)
    nothing = analyse(logs.root, [Change.parse("func:other.fn")])
    assert not nothing.jobs and any("never ran" in w for w in nothing.warnings)


def test_each_impacted_function_row_is_listed_once(logs):
    """A worker reached at several segments (one per request) lists each row once."""
    _worker(logs, f_request=1)
    result = analyse(logs.root, [Change.parse("func:lib.f")])
    rows = [(f.name, f.context) for f in result.functions]
    assert len(rows) == len(set(rows)) == result.count("function")
