"""The SHADHO command line as the rules run it, each call a real ``python -m snakemake_shadho``
process, and a real CNN trained on digits (integration: processes, and seconds of CPU)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import snakemake_shadho as shadho
from snakemake_shadho import digits

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def small_digits():
    return digits.load_data(n_samples=300)


def trial(params, name="svm_rbf.0", cls="slow"):
    return {
        "trial": name,
        "round": 0,
        "subspace": name.split(".")[0],
        "hw_class": cls,
        "tid": int(name.split(".")[1]),
        "vals": {},
        "params": params,
    }


PLUGINS = str(Path(shadho.__file__).parents[1])


def run_cli(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "snakemake_shadho", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={"PYTHONPATH": PLUGINS, "PATH": "/usr/bin"},
    )


def test_cli_validate_names_the_bad_key_without_a_traceback(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("hpo:\n  space: {C: {loguniform: [10, 1]}}\n  hardware: {cpu: {count: 1}}\n")
    proc = run_cli("validate", str(bad))
    assert proc.returncode == 2
    assert "hpo.space.C.loguniform" in proc.stderr and "Traceback" not in proc.stderr
    good = tmp_path / "good.yaml"
    good.write_text("space: {C: {loguniform: [1, 10]}}\nhardware: {cpu: {count: 1}}\n")
    proc = run_cli("validate", str(good))
    assert proc.returncode == 0 and "1 sub-spaces" in proc.stdout


def test_cli_rounds_and_report(tmp_path, small_digits):
    """plan -> evaluate -> merge -> report through the CLI, as the rules run it."""
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(
        json.dumps(
            {
                "space": {
                    "model": {
                        "exclusive": {
                            "svm_linear": {"kernel": "linear", "C": {"loguniform": [0.01, 10]}},
                            "svm_rbf": {
                                "kernel": "rbf",
                                "C": {"loguniform": [0.1, 100]},
                                "gamma": {"loguniform": [1e-3, 1]},
                            },
                        }
                    }
                },
                "hardware": {"fast": {"speed": 2}, "slow": {}},
                "trials_per_round": 3,
                "rounds": 2,
            }
        )
    )
    history, plans = None, []
    for r in range(2):
        plan = tmp_path / f"plan{r}.json"
        extra = ["--history", str(history), "--previous-plan", str(plans[-1])] if r else []
        assert (
            run_cli(
                "plan", str(spec_file), "--round", str(r), *extra, "--out", str(plan)
            ).returncode
            == 0
        )
        plans.append(plan)
        trials = []
        for t in shadho.read_json(plan)["trials"]:
            path = tmp_path / f"{t['trial']}.json"
            shadho.write_json(
                path, shadho.evaluate(digits.evaluate, t, state=small_digits, folds=2)
            )
            trials.append(str(path))
        new_history = tmp_path / f"history{r}.jsonl"
        extra = ["--history", str(history)] if r else []
        proc = run_cli("merge", "--plan", str(plan), *extra, "--out", str(new_history), *trials)
        assert proc.returncode == 0, proc.stderr
        history = new_history
    assert len(shadho.read_jsonl(history)) == 6
    proc = run_cli("merge", "--plan", str(plans[0]), "--out", str(tmp_path / "x.jsonl"))
    assert proc.returncode == 2 and "missing" in proc.stderr
    report = tmp_path / "report" / "report.md"
    proc = run_cli(
        "report", str(spec_file), "--history", str(history), "--out", str(report), *map(str, plans)
    )
    assert proc.returncode == 0, proc.stderr
    best = shadho.read_json(tmp_path / "report" / "best.json")
    records = shadho.read_jsonl(history)
    assert best["best"]["loss"] == min(r["loss"] for r in records if r["status"] == "ok")
    text = report.read_text()
    assert "## Sub-spaces" in text and "svm_rbf" in text and "round 1:" in text
    assert (tmp_path / "report" / "convergence.png").stat().st_size > 1000


def test_real_cnn_trial_learns(small_digits):
    params = {"model": "cnn", "channels": 4, "lr": 0.01, "epochs": 3, "dropout": 0.0}
    record = shadho.evaluate(digits.evaluate, trial(params, "cnn.0", "fast"), state=small_digits)
    assert record["status"] == "ok" and record["loss"] < 0.8  # chance is 0.9
