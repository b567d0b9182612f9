"""Issue 28 on hand-built traces: edges by containment (directory outputs, folder listings),
child processes, incomplete traces warned by job name, state digests by content."""

import functools

from distea import Change, analyse
from distea._model import Job
from distea._order import FileIndex
from distea.tracer import StateFingerprint


def _job(rule, outs, inputs=(), **wildcards):
    outs = [outs] if isinstance(outs, str) else outs
    return {
        "rule": rule,
        "wildcards": wildcards,
        "input": [[p, "h"] for p in inputs],
        "output": [[o, "h"] for o in outs],
    }


def _end(clock):
    return {"k": "end", "c": clock}


def _jobs(result):
    return {j.name for j in result.jobs}


def test_a_file_under_a_directory_output_is_an_edge_to_the_job_that_declared_the_folder(logs):
    """A checkpoint writes shards/x (a directory); the jobs after it declare shards/x/0.tsv."""
    logs.logger(
        [
            _job("split", "shards/x"),
            _job("count", "counts/0.txt", ["shards/x/0.tsv"], i="0"),
            _job("sum", "sum.txt", ["counts/0.txt"]),
            _job("other", "other.txt"),
        ]
    )
    fn = logs.fn
    logs.process("ps", [fn("lib.shard", 1, 2), _end(3)], job="split[shards/x]")
    logs.process(
        "pc",
        [{"k": "open", "p": "shards/x/0.tsv", "c": 1}, fn("lib.count", 2, 3), _end(4)],
        job="count[counts/0.txt]",
    )
    logs.process("po", [fn("lib.other", 1, 2), _end(3)], job="other[other.txt]")
    result = analyse(logs.root, [Change.parse("func:lib.shard")])
    assert _jobs(result) == {"split[shards/x]", "count[counts/0.txt]", "sum[sum.txt]"}
    assert ("lib.count", "count[counts/0.txt]") in result.names("function")


def test_a_listing_of_a_folder_is_an_edge_from_every_job_with_an_output_inside(logs):
    """An undeclared glob over results/: the listing ("results/") depends on what is inside."""
    logs.logger(
        [
            _job("make", "results/a.txt", sample="a"),
            _job("make", "results/b.txt", sample="b"),
            _job("elsewhere", "logs/c.txt"),
            _job("report", "report.md"),
        ]
    )
    fn = logs.fn
    logs.process("pa", [fn("lib.make", 1, 2), _end(3)], job="make[results/a.txt]")
    logs.process("pe", [fn("lib.make", 1, 2), _end(3)], job="elsewhere[logs/c.txt]")
    logs.process(
        "pr",
        [fn("lib.before", 1, 1), {"k": "open", "p": "results/", "c": 2}, fn("lib.fmt", 3, 4)]
        + [_end(5)],
        job="report[report.md]",
    )
    result = analyse(logs.root, [Change.parse("file:data/none.txt"), Change.parse("rule:make")])
    assert "report[report.md]" in _jobs(result)
    functions = result.names("function")
    assert ("lib.fmt", "report[report.md]") in functions
    assert ("lib.before", "report[report.md]") not in functions  # before the listing
    only_elsewhere = analyse(logs.root, [Change.parse("rule:elsewhere")])
    assert _jobs(only_elsewhere) == {"elsewhere[logs/c.txt]"}  # logs/ is not listed


def test_the_file_index_follows_containment_both_ways():
    jobs = [
        Job("1", "ckpt", "ckpt[d]", outputs=[("d", None)]),
        Job("2", "inner", "inner[d2/a/b.txt]", outputs=[("d2/a/b.txt", None)]),
        Job("3", "flat", "flat[top.txt]", outputs=[("./top.txt", None)]),
    ]
    index = FileIndex(jobs)
    keys = lambda path: sorted(j.key for j in index.producers(path))  # noqa: E731
    assert keys("d/0.tsv") == ["ckpt[d]"]  # inside a directory output
    assert keys("d/sub/") == ["ckpt[d]"]  # a listing inside it
    assert keys("d2/") == ["inner[d2/a/b.txt]"]  # a listing of a folder holding an output
    assert keys("d2") == ["inner[d2/a/b.txt]"]  # a declared folder input
    assert keys("top.txt") == ["flat[top.txt]"]
    assert keys("./") == ["ckpt[d]", "flat[top.txt]", "inner[d2/a/b.txt]"]
    assert keys("d2/a/c.txt") == [] and keys("elsewhere/") == []


def _parent_and_children(logs, parent_clock):
    logs.logger([_job("pool", "pool.txt"), _job("next", "next.txt", ["pool.txt"])])
    fn = logs.fn
    logs.process(
        "parent",
        [fn("lib.setup", 1, 2), {"k": "spawn", "c": 3, "job": "pool[pool.txt]", "argv": ["<fork>"]}]
        + [fn("lib.late", 4, 5), _end(6)],
        job="pool[pool.txt]",
    )
    logs.process(
        "child",
        [fn("lib.square", 4, 5), _end(6)],
        job="pool[pool.txt]",
        parent="parent",
        parent_clock=parent_clock,
        forked=True,
    )
    logs.process("pn", [logs.fn("lib.next", 1, 2), _end(3)], job="next[next.txt]")


def test_a_function_run_only_in_a_child_process_impacts_the_job_and_what_follows(logs):
    _parent_and_children(logs, 3)
    result = analyse(logs.root, [Change.parse("func:lib.square")])
    assert _jobs(result) == {"pool[pool.txt]", "next[next.txt]"}
    assert result.warnings == []


def test_a_child_starts_after_its_parents_spawn_point(logs):
    _parent_and_children(logs, 3)
    before = analyse(logs.root, [Change.parse("func:lib.setup")])
    assert ("lib.square", "pool[pool.txt]") in before.names("function")
    after = analyse(logs.root, [Change.parse("func:lib.late")])  # ran after the fork
    assert ("lib.square", "pool[pool.txt]") not in after.names("function")


def test_an_unknown_spawn_point_over_approximates(logs):
    _parent_and_children(logs, None)
    after = analyse(logs.root, [Change.parse("func:lib.late")])
    assert ("lib.square", "pool[pool.txt]") in after.names("function")


def test_a_killed_child_makes_its_job_conservative_with_a_warning_naming_it(logs):
    logs.logger([_job("pool", "pool.txt"), _job("quiet", "quiet.txt")])
    logs.process("parent", [logs.fn("lib.main", 1, 2), _end(3)], job="pool[pool.txt]")
    logs.process("child", [], job="pool[pool.txt]", parent="parent", parent_clock=1, forked=True)
    logs.process("pq", [logs.fn("lib.other", 1, 2), _end(3)], job="quiet[quiet.txt]")
    result = analyse(logs.root, [Change.parse("func:lib.gone")])
    assert _jobs(result) == {"pool[pool.txt]"}
    assert result.conservative["pool[pool.txt]"].startswith("its trace is incomplete")
    assert any("pool[pool.txt]" in w and "killed" in w for w in result.warnings)


def test_a_python_program_that_left_no_trace_is_warned_by_job_name(logs):
    logs.logger([_job("tool", "t.txt"), _job("sh", "s.txt")])
    spawn = {"k": "spawn", "c": 2, "job": "tool[t.txt]", "argv": ["/usr/bin/python3.9", "-I"]}
    logs.process("pt", [logs.fn("lib.a", 1, 1), spawn, _end(3)], job="tool[t.txt]")
    cat = {"k": "spawn", "c": 2, "job": "sh[s.txt]", "argv": ["/bin/cat", "x"]}
    logs.process("ps", [logs.fn("lib.b", 1, 1), cat, _end(3)], job="sh[s.txt]")
    result = analyse(logs.root, [Change.parse("func:lib.zzz")])
    assert _jobs(result) == {"tool[t.txt]"}  # a program that runs no Python cannot hide code
    assert any("tool[t.txt]" in w and "Python program" in w for w in result.warnings)


def test_a_traced_python_child_completes_its_parents_count(logs):
    logs.logger([_job("tool", "t.txt")])
    spawn = {"k": "spawn", "c": 2, "job": "tool[t.txt]", "argv": ["sh", "-c", "python -m x"]}
    logs.process("pt", [logs.fn("lib.a", 1, 1), spawn, _end(3)], job="tool[t.txt]")
    logs.process("px", [logs.fn("lib.x", 1, 1), _end(2)], job="tool[t.txt]", parent="pt")
    result = analyse(logs.root, [Change.parse("func:lib.zzz")])
    assert _jobs(result) == set() and not result.conservative
    assert not any("Python program" in w for w in result.warnings)


def _memo():
    cache = {}

    def lookup(key):
        if key not in cache:
            cache[key] = key * 2
        return cache[key]

    return lookup


def test_state_digests_see_a_closures_cells_a_functions_code_and_a_partials_arguments():
    digest = StateFingerprint().digest
    memo = _memo()
    before = digest({"m": memo})
    memo(3)  # the cache in the closure filled: carried state changed
    assert digest({"m": memo}) != before

    def one():
        return 1

    def two():
        return 2

    two.__qualname__ = one.__qualname__
    assert digest({"f": one}) != digest({"f": two})  # same name, other code
    assert digest({"p": functools.partial(int, "7")}) != digest({"p": functools.partial(int, "8")})
    assert digest({"f": one}) == digest({"f": one})
