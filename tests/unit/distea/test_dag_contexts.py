"""Snakemake's own process as a traced process: job contexts, feeds and attribution.

A real :class:`~distea.tracer.ProcessTrace` (in this process, functions simulated by its entry
and return calls, no tracer started) records generated histories of a Snakemake process:
workflow code run outside any job (the Snakefile's top level), contexts computing a job's
input or params with or without workflow code, and ``run:`` code of a job. The analysis of
each function change must impact exactly the jobs the rule says:

* a context in which workflow code ran depends on everything the process did before it
  (state may carry over), so it is impacted when the function first ran at or before it;
* a context without workflow code depends only on code run outside any context before it.

Every process declares a complete tracer (``instrument``) and every job has a traced executor
(a script process that ran none of these functions), so the analysis has no blind spot to be
conservative about and must answer exactly.
"""

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from distea import Change, analyse
from distea._schema import SCHEMA_VERSION
from distea.tracer import ProcessTrace
from tests.conftest import examples

FUNCTIONS = ["settings.a", "settings.b", "settings.c", "settings.d"]
JOBS = [f"r[o{i}]" for i in range(4)]

_STEP = st.one_of(
    st.tuples(st.just("outside"), st.just(""), st.lists(st.sampled_from(FUNCTIONS), max_size=2)),
    st.tuples(
        st.sampled_from(["ctx", "run"]),
        st.sampled_from(JOBS),
        st.lists(st.sampled_from(FUNCTIONS), max_size=2),
    ),
)


def _record(folder: Path, steps: list[tuple[str, str, list[str]]]) -> None:
    trace = ProcessTrace(folder, "dag", name="dag:test:1")
    for kind, job, functions in steps:
        token = trace.begin_context() if kind != "outside" else None
        for name in functions:
            trace._enter(name)
            trace._leave(name)
        if kind != "outside":
            trace.end_context(token, job, to_end=kind == "run")
    trace.mode = "instrument"  # the log's end record declares a complete tracer
    trace.dump()
    for i, job in enumerate(JOBS):  # each job's traced executor
        script = ProcessTrace(folder, "script", name=f"script:test:{i}", job=job)
        script.mode = "instrument"
        script.dump()
    header = {"distea": 1, "k": "header", "source": "logger", "process": "snakemake"}
    lines = [header]
    for i in range(len(JOBS)):
        lines.append({"k": "job", "id": str(i), "rule": "r", "output": [[f"o{i}", "h"]]})
        lines.append({"k": "done", "id": str(i), "output": [[f"o{i}", "h"]]})
    (folder / "snakemake.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))


def _expected(steps: list[tuple[str, str, list[str]]], changed: str) -> set[str]:
    first = next((i for i, (_, _, fns) in enumerate(steps) if changed in fns), None)
    if first is None:
        return set()
    impacted = set()
    for i, (kind, job, functions) in enumerate(steps):
        if kind == "outside" or i < first:
            continue
        if functions:
            impacted.add(job)
        elif any(k == "outside" and fns for k, _, fns in steps[first:i]):
            impacted.add(job)
    return impacted


@settings(max_examples=examples(60), deadline=None)
@given(steps=st.lists(_STEP, max_size=10))
def test_generated_histories_impact_the_jobs_the_rule_says(tmp_path_factory, steps):
    folder = tmp_path_factory.mktemp("dag")
    _record(folder, steps)
    for changed in FUNCTIONS:
        result = analyse(folder, [Change.parse(f"func:{changed}")])
        assert {j.name for j in result.jobs} == _expected(steps, changed), changed
        # Code run inside a context is reported as run for that context's job.
        ran_for = result.names("function")
        for kind, job, functions in steps:
            if kind != "outside" and changed in functions and job in _expected(steps, changed):
                assert (changed, job) in ran_for


def test_context_records(tmp_path):
    """Feeds: a context with code feeds from its end, one without from the last outside code;
    a nested context belongs to the outer one; run: code feeds the job's end."""
    trace = ProcessTrace(tmp_path, "dag", name="dag:test:2")
    trace._enter("Snakefile.<module>")
    trace._leave("Snakefile.<module>")
    outer = trace.begin_context()
    inner = trace.begin_context()
    assert inner is None
    trace.end_context(inner, "r[o1]")
    trace.end_context(outer, "r[o1]")
    with_code = trace.begin_context()
    trace._enter("settings.a")
    trace._leave("settings.a")
    trace.end_context(with_code, "r[o2]", to_end=True)
    trace.dump()
    records = [json.loads(line) for line in Path(trace.path).read_text().splitlines()]
    ctx = [r for r in records if r["k"] == "ctx"]
    assert [r["job"] for r in ctx] == ["r[o1]", "r[o2]"]
    module = next(r["c"] for r in records if r.get("f") == "Snakefile.<module>")
    assert ctx[0]["f"] >= module[1] and ctx[0]["f"] < ctx[0]["c"][0]
    assert ctx[1]["f"] == ctx[1]["c"][1] and ctx[1]["to"] == "end" and "to" not in ctx[0]
    assert records[0]["distea"] == SCHEMA_VERSION == 3


def test_untraced_bystander_reads_are_not_the_workflows(tmp_path):
    """A Snakemake-side read (no workflow frame) is not recorded in Snakemake's process."""
    from distea import tracer

    trace = ProcessTrace(
        tmp_path, "dag", root=tmp_path, name="dag:test:3", workflow_code_reads_only=True
    )
    assert trace.workflow_code_reads_only
    assert not tracer._workflow_frame(trace)  # this test's frames are not under the root
    trace.dump()
    header: dict[str, Any] = json.loads(Path(trace.path).read_text().splitlines()[0])
    assert "workflow_code_reads_only" not in header
