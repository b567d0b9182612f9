"""Event capture for real: a Snakemake run of the DISTEA subject under the sticky executor with
the ``distea`` logger plugin and the tracer on, then impact queries on what it recorded."""

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
SUBJECT = REPO / "bench" / "distea_subject"


def _env(workdir: Path, traces: Path) -> dict[str, str]:
    paths = [PLUGINS_PATH, str(workdir), os.environ.get("PYTHONPATH", "")]
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in paths if p),
        "DISTEA_TRACE": str(traces),
    }


@pytest.fixture(scope="module")
def traced_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """One traced run, shared by the tests of this module (a real run costs seconds)."""
    workdir = tmp_path_factory.mktemp("distea") / "wf"
    shutil.copytree(SUBJECT, workdir)
    traces = workdir / "traces"
    cmd = [
        sys.executable, "-m", "snakemake", "--executor", "sticky", "-j", "2", "--nocolor",
        "--scheduler", "greedy", "--logger", "distea", "--logger-distea-dir", str(traces),
        "--config", 'samples=["S2","S3"]',
    ]  # fmt: skip
    proc = subprocess.run(
        cmd, cwd=workdir, env=_env(workdir, traces), capture_output=True, text=True, timeout=240
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return workdir, traces


def _records(traces: Path, prefix: str) -> list[dict]:
    files = sorted(traces.glob(f"{prefix}-*.jsonl"))
    assert files, f"no {prefix} logs in {sorted(p.name for p in traces.iterdir())}"
    return [json.loads(line) for f in files for line in f.read_text().splitlines()]


@pytest.mark.integration
def test_logger_plugin_writes_jobs_with_hashes(traced_run):
    _, traces = traced_run
    records = _records(traces, "snakemake")
    jobs = {r["id"]: r for r in records if r["k"] == "job"}
    done = [r for r in records if r["k"] == "done"]
    assert {r["rule"] for r in jobs.values()} >= {"prepare", "embed", "score", "aggregate"}
    prepare = next(r for r in jobs.values() if r["rule"] == "prepare")
    assert prepare["input"][0][0].startswith("data/") and len(prepare["input"][0][1]) == 32
    outputs = [o for r in done for o in r["output"]]
    assert all(h for _, h in outputs), outputs  # every finished output has a content hash


@pytest.mark.integration
def test_sticky_messages_carry_ids_and_clocks_on_both_sides(traced_run):
    _, traces = traced_run
    manager = _records(traces, "sticky-manager")
    workers = _records(traces, "worker")
    sent = {r["m"]: r for r in manager if r["k"] == "send"}
    received = {r["m"]: r for r in workers if r["k"] == "recv"}
    assert len(sent) == 2 and set(sent) == set(received)
    for mid, send in sent.items():
        assert received[mid]["c"] > send["c"]  # Lamport: receipt after the send
        assert received[mid]["job"] == send["job"]
    replies = {r["m"] for r in workers if r["k"] == "send"}
    assert replies == {r["m"] for r in manager if r["k"] == "recv"}
    assert any(r["k"] == "tmpl" and r["n"] == "model" for r in workers)
    functions = {r["f"] for r in workers if r["k"] == "fn"}
    assert {
        "wflib.model.build_vocab",
        "wflib.model.Model.embed",
        "scripts.embed.<module>",
    } <= functions
    assert not any("snakemake_executor_plugin_sticky" in f for f in functions)
    # The template builder: itself (settrace, monitoring) or its file's body (wrap, on 3.11).
    assert {"sticky_templates.build", "sticky_templates.<module>"} & functions


@pytest.mark.integration
def test_script_tracer_records_functions_reads_and_params(traced_run):
    _, traces = traced_run
    records = _records(traces, "script")
    heads = [r for r in records if r["k"] == "header"]
    assert {h["job"] for h in heads} >= {"prepare[prep/S2.json]", "score[score/S3.txt]"}
    functions = {r["f"] for r in records if r["k"] == "fn"}
    assert {
        "wflib.text.normalize",
        "wflib.text.strip_digits",
        "scripts.prepare.<module>",
    } <= functions
    assert {"prep/S2.json", "data/S2.txt"} & {r["p"] for r in records if r["k"] == "open"}
    assert {r["n"] for r in records if r["k"] == "param"} >= {"min_len", "threshold", "boost"}


@pytest.mark.integration
def test_impact_of_a_branch_taken_by_one_sample(traced_run):
    """wflib.text.shorten runs only for the long S3 document: S2's preparation is not impacted,
    and S2's embedding only if the worker that served it had served S3 before (shared state)."""
    _, traces = traced_run
    result = analyse(traces, [Change.parse("func:wflib.text.shorten")])
    jobs = {j.name for j in result.jobs}
    assert {"prepare[prep/S3.json]", "embed[emb/S3.json]", "score[score/S3.txt]"} <= jobs
    assert "aggregate[report.txt]" in jobs
    assert "prepare[prep/S2.json]" not in jobs
    served: dict[str, list[str]] = {}
    for r in _records(traces, "worker"):
        if r["k"] == "header":
            worker = r["process"]
        elif r["k"] == "recv":
            served.setdefault(worker, []).append(r["job"])
    after_s3 = any(
        "embed[emb/S3.json]" in order
        and order.index("embed[emb/S2.json]") > order.index("embed[emb/S3.json]")
        for order in served.values()
        if "embed[emb/S2.json]" in order
    )
    assert ("embed[emb/S2.json]" in jobs) == after_s3
    assert ("score[score/S2.txt]" in jobs) == after_s3
    assert "report.txt" in {o.name for o in result.outputs}
    chain = next(j.chain for j in result.jobs if j.name == "score[score/S3.txt]")
    assert any("file emb/S3.json" in step for step in chain)


@pytest.mark.integration
def test_impact_report_as_a_workflow_step(traced_run, tmp_path):
    workdir, traces = traced_run
    cmd = [
        sys.executable, "-m", "snakemake", "-s", str(REPO / "rules" / "impact.smk"), "-j", "1",
        "--nocolor", "impact/report.md", "--config", f"distea_logs={traces}",
        'distea_changes=["param:score.threshold"]',
    ]  # fmt: skip
    proc = subprocess.run(
        cmd, cwd=tmp_path, env=_env(workdir, traces), capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = (tmp_path / "impact" / "report.md").read_text()
    assert "`param:score.threshold`" in report and "score[score/S2.txt]" in report
    assert (tmp_path / "impact" / "report.png").stat().st_size > 1000
    assert "prepare[prep/S2.json]" not in (tmp_path / "impact" / "impact.txt").read_text()


@pytest.mark.integration
def test_impact_step_takes_one_change_as_a_string_and_refuses_none(traced_run, tmp_path):
    """Issue 31's red team, cases 11 and 12: ``distea_changes=func:...`` (a string) was split
    into one --change per letter; no distea_changes failed inside the job, the reason only in
    its log."""
    workdir, traces = traced_run
    base = [
        sys.executable, "-m", "snakemake", "-s", str(REPO / "rules" / "impact.smk"), "-j", "1",
        "--nocolor", "impact/report.md", "--config", f"distea_logs={traces}",
    ]  # fmt: skip
    env = _env(workdir, traces)
    one = subprocess.run(
        [*base, "distea_changes=param:score.threshold"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert one.returncode == 0, one.stdout + one.stderr
    assert "`param:score.threshold`" in (tmp_path / "impact" / "report.md").read_text()
    none = subprocess.run(
        base, cwd=tmp_path / "impact", env=env, capture_output=True, text=True, timeout=120
    )
    assert none.returncode != 0
    assert "distea_impact: no change to ask about; add --config" in none.stdout + none.stderr


@pytest.mark.integration
def test_tracing_retires_no_worker(traced_run):
    """The trace a worker writes is its own file, not its template's: a template whose build
    made or used nothing a job changes keeps its worker while traced (docs/sticky.md, "What
    the template's build made or used on disk")."""
    workdir, _ = traced_run
    events = [
        json.loads(line)
        for f in (workdir / ".snakemake" / "sticky").glob("*/metrics.jsonl")
        for line in f.read_text().splitlines()
    ]
    assert any(e.get("event") == "invocation" for e in events), events[:5]
    assert not [e for e in events if e.get("event") == "worker_retired"]
