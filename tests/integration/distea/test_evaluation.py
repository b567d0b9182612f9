"""DISTEA on workflows it was not designed for (issue 15, part 6; issue 28), quick mode: every
subject workflow really runs (sticky executor, Snakemake-level helpers, dispatch tables, a
checkpoint's directory with child processes written from the docs alone, a tabular ETL with
subprocesses and nested config), mutants really re-run; DISTEA must find every job and
output that really changed (recall 1.0), and say so with a warning wherever its answer rests
on a blind spot.

The full evaluation (every generated mutant, precision against static DAG descendants,
Snakemake's own detection and MCov) is ``python bench/distea.py --only-evaluation``.
"""

import json
import sys
from pathlib import Path

import pytest

from distea import read_logs
from distea._query import PARAM_METHODS
from tests.conftest import bench_module

REPO = Path(__file__).resolve().parents[3]
bench_module("distea_eval")  # not via sys.path: bench/distea.py would shadow distea
from distea_eval.evaluate import SUBJECTS, evaluate  # noqa: E402

# Three real Snakemake runs per subject in the shared fixture: about 3 min on 2 cores.
pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    work = tmp_path_factory.mktemp("distea_eval")
    return evaluate(True, work, log=lambda *_: None), work


def test_recall_is_one_on_every_subject_at_job_and_output_level(quick):
    result, _ = quick
    assert {s["subject"] for s in result["subjects"]} == {s.name for s in SUBJECTS}
    assert len(SUBJECTS) >= 5  # issue 28: five subjects, one written from the docs alone
    for subject in result["subjects"]:
        rows = [r for r in subject["per_mutant"] if not r.get("crashed")]
        assert len(rows) == 2, subject["subject"]
        for row in rows:
            for level in ("job", "output"):
                cell = row["tools"]["distea"][level]
                assert cell["true"] > 0, (subject["subject"], row["mutant"])  # not inert
                assert cell["recall"] == 1.0, (subject["subject"], row["mutant"], cell["missed"])


def _blind_spots(traces: Path) -> set[str]:
    """Which blind spots the base run's logs have (a complete tracer and a traced Snakemake
    process, issue 15 parts 1-3, remove them)."""
    trace = read_logs(traces)
    procs = [p for p in trace.processes.values() if p.role != "sticky-manager"]
    found = set()
    if any(not p.complete for p in procs):
        found.add("incomplete tracer")
    if not any(p.role in ("dag", "snakemake") and p.fn_ids for p in procs):
        found.add("Snakemake's process untraced")
    if any(n in PARAM_METHODS for p in procs for n, _, _ in p.params):
        found.add("params read whole")
    return found


def test_answers_resting_on_a_blind_spot_carry_a_warning(quick):
    """The dispatch-table function (sticky worker), the Snakefile-level helper and the
    decorator-registered function: where the logs have the blind spot, the answer says so;
    where they do not (complete tracing), it carries no warning."""
    result, work = quick
    cases = {
        "arith qclib.features.f_range": ("sensorqc", "incomplete tracer", "wrap tracer"),
        "const wfconf.clip_for": (
            "snakehelpers",
            "Snakemake's process untraced",
            "Snakemake's own process",
        ),
        "const ops.registry.double": ("dispatch", "incomplete tracer", "decorated with @register"),
        "param report.decimals": ("sensorqc", "params read whole", "as a whole"),
    }
    rows = [r for s in result["subjects"] for r in s["per_mutant"]]
    for name, (subject, blind_spot, phrase) in cases.items():
        row = next(r for r in rows if r["mutant"].startswith(name))
        warned = any(phrase in w for w in row["warning_text"])
        assert warned == (blind_spot in _blind_spots(work / subject / "base" / "traces")), row


def test_sticky_worker_logs_whether_each_request_changed_its_state(quick):
    """The detector of sensorqc is read-only once built: the worker says so, per request."""
    _, work = quick
    notes = [
        json.loads(line)
        for path in (work / "sensorqc" / "base" / "traces").glob("worker-*.jsonl")
        for line in path.read_text().splitlines()
        if '"k":"state"' in line
    ]
    assert len(notes) == 4  # the build, then one per detect job
    assert notes[0]["w"] is True and "state was built" in notes[0]["e"]
    assert [n["w"] for n in notes[1:]] == [False, False, False]
    assert all("did not change" in n["e"] for n in notes[1:])


def test_real_answer_reads_as_jobs_with_warnings_and_a_full_graph(quick, tmp_path):
    """On real sticky logs: chains name jobs (no host:pid), the JSON lists its warnings, an
    absolute path is the same file as a relative one, and the report's graph is drawn."""
    import subprocess

    _, work = quick
    base = work / "sensorqc" / "base"
    cmd = [sys.executable, "-m", "distea", "impact", "--logs", str(base / "traces")]
    cmd += ["--explain", "full", "--json"]
    answers = []
    for path in ("data/B.csv", str(base / "data" / "B.csv")):
        out = subprocess.run(
            [*cmd, "--quiet", "--change", f"file:{path}"], cwd=tmp_path, capture_output=True,
            text=True, check=True,
        ).stdout  # fmt: skip
        answers.append(json.loads(out))
    assert answers[0]["jobs"] == answers[1]["jobs"]
    assert {j["name"] for j in answers[0]["jobs"]} >= {"clean[clean/B.json]", "report[report.tsv]"}
    assert "all[]" not in {j["name"] for j in answers[0]["jobs"]}
    assert isinstance(answers[0]["warnings"], list)
    steps = [s for j in answers[0]["jobs"] for s in j["chain"]]
    processes = set(read_logs(base / "traces").processes)
    assert steps and not any(name in step for name in processes for step in steps)
    report = tmp_path / "r.md"
    subprocess.run(
        [*cmd[:-1], "--change", "file:data/B.csv", "--report", str(report)], cwd=tmp_path,
        capture_output=True, check=True,
    )  # fmt: skip
    assert (tmp_path / "r.png").stat().st_size > 1000
