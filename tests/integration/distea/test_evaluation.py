"""DISTEA on workflows it was not designed for (issue 15, part 6), quick mode: three subject
workflows really run (sticky executor, Snakemake-level helpers, dispatch tables), mutants
really re-run; DISTEA must find every job and output that really changed (recall 1.0), and
say so with a warning wherever its answer rests on a blind spot.

The full evaluation (every generated mutant, precision against static DAG descendants,
Snakemake's own detection and MCov) is ``python bench/distea.py --only-evaluation``.
"""

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "bench"))

from distea_eval.evaluate import evaluate  # noqa: E402

# Nine real Snakemake runs in the shared fixture: about 1.5 min on a quiet 2-core machine.
pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, Path]:
    work = tmp_path_factory.mktemp("distea_eval")
    return evaluate(True, work, log=lambda *_: None), work


def test_recall_is_one_on_every_subject_at_job_and_output_level(quick):
    result, _ = quick
    assert {s["subject"] for s in result["subjects"]} == {"sensorqc", "snakehelpers", "dispatch"}
    for subject in result["subjects"]:
        rows = [r for r in subject["per_mutant"] if not r.get("crashed")]
        assert len(rows) == 2, subject["subject"]
        for row in rows:
            for level in ("job", "output"):
                cell = row["tools"]["distea"][level]
                assert cell["true"] > 0, (subject["subject"], row["mutant"])  # not inert
                assert cell["recall"] == 1.0, (subject["subject"], row["mutant"], cell["missed"])


def test_answers_resting_on_a_blind_spot_carry_a_warning(quick):
    """The dispatch-table function (sticky worker, wrap tracer), the Snakefile-level helper and
    the decorator-registered function are found only conservatively: each says why."""
    result, _ = quick
    rows = [r for s in result["subjects"] for r in s["per_mutant"]]
    expected = {
        "arith qclib.features.f_range": "wrap tracer",
        "const wfconf.clip_for": "Snakemake's own process",
        "const ops.registry.double": "decorated with @register",
        "param report.decimals": "as a whole",
    }
    for name, phrase in expected.items():
        row = next(r for r in rows if r["mutant"].startswith(name))
        assert any(phrase in w for w in row["warning_text"]), (name, row)


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
