"""Issue 15, parts 1-3, for real: a sensor QC workflow run by Snakemake with the default tracer.

* Functions reached through references taken before tracing (a dispatch dict, a callback list,
  ``functools.partial``, a decorator's closure) are recorded, and the default tracer answers
  every function query as the settrace tracer (which sees every call) does.
* Snakemake's own process is traced: a helper called by a ``params:`` lambda, an input
  function's helper and a parse-time helper impact the jobs they computed for, and a real
  re-run after changing such a helper changes nothing outside the answer.
* ``snakemake.params.get("decimals", 3)`` is recorded as reading ``decimals``.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from distea import Change, analyse
from tests.conftest import PLUGINS_PATH

REPO = Path(__file__).resolve().parents[3]
SUBJECT = Path(__file__).resolve().parent / "sensorqc"
QC = {s: f"qc[qc/{s}.json]" for s in ("S1", "S2", "S3")}
# ``all[]`` has no outputs: a target that produces nothing is not a job a change can impact.
DOWNSTREAM = {"report[report.txt]", "summary[summary.txt]"}
ALL_JOBS = {*QC.values(), *DOWNSTREAM}


def _snakemake(workdir: Path, mode: "str | None", traces: "Path | None", *extra: str) -> str:
    """Run Snakemake in ``workdir`` (traced into ``traces`` when given); return its output."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([PLUGINS_PATH, str(workdir)])
    for name in ("DISTEA_TRACE", "DISTEA_TRACE_MODE", "DISTEA_DIGESTS", "DISTEA_TRACE_ROOT"):
        env.pop(name, None)
    cmd = [sys.executable, "-m", "snakemake", "--executor", "local", "-j", "2", "--nocolor"]
    if traces is not None:
        env["DISTEA_TRACE"] = str(traces)
        cmd += ["--logger", "distea", "--logger-distea-dir", str(traces)]
        if mode:
            env["DISTEA_TRACE_MODE"] = mode
    proc = subprocess.run(
        [*cmd, *extra], cwd=workdir, env=env, capture_output=True, text=True, timeout=240
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout + proc.stderr


def _run(workdir: Path, mode: "str | None", traced: bool = True) -> Path:
    traces = workdir / "traces"
    _snakemake(workdir, mode, traces if traced else None)
    return traces


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The same workflow traced by the default tracer, by settrace, and not traced at all."""
    out = {}
    for mode in ("default", "settrace", "untraced"):
        workdir = tmp_path_factory.mktemp(mode) / "wf"
        shutil.copytree(SUBJECT, workdir)
        out[mode] = _run(workdir, "settrace" if mode == "settrace" else None, mode != "untraced")
    return out


def _outputs(workdir: Path) -> dict[str, bytes]:
    files = [*workdir.glob("qc/*.json"), workdir / "report.txt", workdir / "summary.txt"]
    return {str(p.relative_to(workdir)): p.read_bytes() for p in files}


@pytest.mark.integration
def test_traced_runs_compute_what_an_untraced_run_computes(runs):
    """Sameness first: tracing (and running the rest of a script instrumented) changes nothing."""
    plain = _outputs(runs["untraced"].parent)
    assert len(plain) == 5
    assert _outputs(runs["default"].parent) == plain
    assert _outputs(runs["settrace"].parent) == plain
    assert not runs["untraced"].exists()


@pytest.mark.integration
def test_tracing_leaves_snakemakes_rerun_decisions_alone(runs):
    """A traced run after an untraced one (and the reverse) has nothing to re-run: tracing
    changes neither params nor the code Snakemake records (a run: block's line table)."""
    nothing = "Nothing to be done"
    untraced, traced = runs["untraced"].parent, runs["default"].parent
    assert nothing in _snakemake(untraced, None, untraced / "dry-traces", "--dry-run")
    assert nothing in _snakemake(traced, None, None, "--dry-run")


def _jobs(traces: Path, change: str) -> set[str]:
    return {j.name for j in analyse(traces, [Change.parse(change)]).jobs}


def _records(traces: Path, prefix: str) -> list[dict]:
    return [
        json.loads(line)
        for path in sorted(traces.glob(f"{prefix}-*.jsonl"))
        for line in path.read_text().splitlines()
    ]


def _functions_by_job(traces: Path) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in traces.glob("script-*.jsonl"):
        records = [json.loads(line) for line in path.read_text().splitlines()]
        job = records[0]["job"]
        found[job] = {r["f"] for r in records if r["k"] == "fn"}
    return found


@pytest.mark.integration
def test_references_taken_before_tracing_are_recorded(runs):
    """Issue 15: EXTRACTORS dict, callbacks, partial and decorator closures were invisible to the
    3.11 default tracer; f_range (also called directly by S3) missed the S1 job, silently."""
    seen = _functions_by_job(runs["default"])
    assert "qclib.features.f_range" in seen[QC["S1"]]  # via EXTRACTORS["range"]
    assert "qclib.features.f_scaled" in seen[QC["S1"]]  # via functools.partial
    assert "qclib.features.f_mean" in seen[QC["S2"]]  # via EXTRACTORS["mean"] and SUMMARIES
    for job in QC.values():  # the function inside the decorator's closure
        assert "qclib.features.f_clip" in seen[job]
    # The script's own functions, one reached through a local dispatch dict.
    assert {"scripts.qc.spread", "scripts.qc.centred"} <= seen[QC["S2"]]
    local = analyse(runs["default"], [Change.parse("func:scripts.qc.spread")])
    assert {j.name for j in local.jobs} == {QC["S2"], *DOWNSTREAM}
    assert not [w for w in local.warnings if "not traced individually" in w], local.warnings
    downstream = DOWNSTREAM
    assert _jobs(runs["default"], "func:qclib.features.f_range") == {
        QC["S1"],
        QC["S3"],
        *downstream,
    }
    assert _jobs(runs["default"], "func:qclib.features.f_scaled") == {
        QC["S1"],
        QC["S3"],
        *downstream,
    }
    assert _jobs(runs["default"], "func:qclib.features.f_mean") == {QC["S2"], *downstream}
    assert _jobs(runs["default"], "func:qclib.features.f_clip") == ALL_JOBS


@pytest.mark.integration
def test_default_tracer_answers_every_function_query_as_settrace(runs):
    """Differential over every function settrace saw (not hand-picked): the same impacted jobs.

    The one exception: Snakemake's generated rule functions (``Snakefile.__rule_NAME``, the
    code behind ``script:``/``run:``) are left as written by the default tracer (Snakemake
    reads their line tables), so a query naming one falls back to the Snakefile's body: a
    superset, never a miss (and a change there is a ``rule:`` change anyway)."""

    def recorded(mode: str) -> set[str]:
        return {
            r["f"]
            for prefix in ("script", "dag")
            for r in _records(runs[mode], prefix)
            if r["k"] == "fn" and not r["f"].split(".")[-1].startswith("<")
        }

    names, seen = recorded("settrace"), recorded("default")
    assert len(names) >= 12, names
    assert {n for n in names - seen if not n.startswith("Snakefile.__rule_")} == set()
    for name in sorted(names):
        change = f"func:{name}"
        default, settrace = _jobs(runs["default"], change), _jobs(runs["settrace"], change)
        if name in seen:
            assert default == settrace, name
        else:
            assert default >= settrace, name


@pytest.mark.integration
def test_snakefile_level_helpers_impact_the_jobs_they_computed(runs):
    """Issue 15: ``params: clip=lambda wc: settings.clip_for(wc.s)`` was answered "never ran"."""
    traces = runs["default"]
    result = analyse(traces, [Change.parse("func:settings.clip_for")])
    assert not [w for w in result.warnings if "never ran" in w], result.warnings
    assert {j.name for j in result.jobs} >= ALL_JOBS
    ran_for = {(f.name, f.context) for f in result.functions}
    assert {("settings.clip_for", job) for job in QC.values()} <= ran_for
    # An input function's helper, and a helper run while the Snakefile is read (the sample list).
    assert _jobs(traces, "func:settings.raw_path") >= set(QC.values())
    assert _jobs(traces, "func:settings.samples") == ALL_JOBS
    dag = _records(traces, "dag")
    contexts = {r["job"] for r in dag if r["k"] == "ctx"}
    assert set(QC.values()) <= contexts
    assert not any(r["k"] == "open" and r["p"] == "Snakefile" for r in dag)


@pytest.mark.integration
def test_changing_a_snakefile_helper_changes_only_predicted_outputs(runs, tmp_path):
    """Ground truth by re-running: a changed ``_limits`` (behind an lru_cache, so it runs once,
    for the first qc job) changes outputs, all of them inside DISTEA's answer."""
    base = runs["default"]
    predicted = {o.name for o in analyse(base, [Change.parse("func:settings._limits")]).outputs}
    mutant = tmp_path / "wf"
    shutil.copytree(SUBJECT, mutant)
    settings = mutant / "settings.py"
    text = settings.read_text()
    settings.write_text(text.replace('{"S1": 5.0, "S2": 7.5}', '{"S1": 4.0, "S2": 6.0}'))
    _run(mutant, None, traced=False)  # ground truth: outputs only
    hashes = {"base": _outputs(base.parent), "mutant": _outputs(mutant)}
    changed = {p for p in hashes["base"] if hashes["base"][p] != hashes["mutant"][p]}
    assert {"qc/S1.json", "qc/S2.json", "report.txt"} <= changed  # the mutant really bites
    assert "summary.txt" not in changed  # (same line count)
    assert changed <= predicted


@pytest.mark.integration
def test_params_get_is_recorded_by_key(runs):
    """Issue 15: ``snakemake.params.get("decimals", 3)`` was recorded as a parameter ``get``."""
    traces = runs["default"]
    params = {(r["n"], r["job"]) for r in _records(traces, "script") if r["k"] == "param"}
    assert ("decimals", "report[report.txt]") in params
    assert not any(name == "get" for name, _ in params)
    assert ("clip", QC["S1"]) in params
    result = analyse(traces, [Change.parse("param:report.decimals")])
    assert "report[report.txt]" in {j.name for j in result.jobs}
    assert not [w for w in result.warnings if "no job read" in w], result.warnings
