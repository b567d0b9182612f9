"""Running trials (real digits objectives), the CLI's error handling, and the report."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

import snakemake_shadho as shadho
from snakemake_shadho import digits
from snakemake_shadho.report import write_report

PLUGINS = str(Path(shadho.__file__).parents[1])


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


@pytest.fixture(scope="module")
def small_digits():
    return digits.load_data(n_samples=300)


def test_real_svm_trial_record(small_digits):
    params = {"model": "svm_rbf", "kernel": "rbf", "C": 10.0, "gamma": 0.05}
    record = shadho.evaluate(digits.evaluate, trial(params), state=small_digits, folds=2)
    assert record["status"] == "ok" and 0 <= record["loss"] < 0.3
    assert record["extra"]["accuracy"] == pytest.approx(1 - record["loss"])
    assert record["duration_s"] > 0 and record["finished"] >= record["started"]
    json.dumps(record, allow_nan=False)


def test_real_cnn_trial_learns(small_digits):
    params = {"model": "cnn", "channels": 4, "lr": 0.01, "epochs": 3, "dropout": 0.0}
    record = shadho.evaluate(digits.evaluate, trial(params, "cnn.0", "fast"), state=small_digits)
    assert record["status"] == "ok" and record["loss"] < 0.8  # chance is 0.9


def test_failing_objective_gives_a_fail_record_not_an_exception(small_digits):
    params = {"model": "svm_rbf", "kernel": "no-such-kernel", "C": 1.0}
    record = shadho.evaluate(digits.evaluate, trial(params), state=small_digits, folds=2)
    assert record["status"] == "fail" and record["loss"] is None
    assert "no-such-kernel" in record["error"]
    nan = shadho.evaluate(lambda p: float("nan"), trial({}))
    assert nan["status"] == "fail" and "non-finite" in nan["error"]


def test_load_objective_errors_say_what_to_write():
    assert shadho.load_objective("snakemake_shadho.digits:evaluate") is digits.evaluate
    with pytest.raises(shadho.ShadhoError, match="module:function"):
        shadho.load_objective("snakemake_shadho.digits")
    with pytest.raises(shadho.ShadhoError, match="cannot import"):
        shadho.load_objective("no_such_module_xyz:f")
    with pytest.raises(shadho.ShadhoError, match="no function"):
        shadho.load_objective("snakemake_shadho.digits:nope")


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


def test_write_report_with_a_failed_trial(tmp_path):
    spec = shadho.load_spec({"space": {"x": {"uniform": [0, 1]}}, "hardware": {"cpu": {}}})
    history = [
        {
            "trial": "all.0",
            "round": 0,
            "subspace": "all",
            "hw_class": "cpu",
            "status": "ok",
            "loss": 0.3,
            "duration_s": 1.0,
            "started": 0.0,
            "finished": 1.0,
            "params": {"x": 0.2},
        },
        {
            "trial": "all.1",
            "round": 0,
            "subspace": "all",
            "hw_class": "cpu",
            "status": "fail",
            "loss": None,
            "duration_s": 0.5,
            "started": 0.0,
            "finished": 0.5,
            "error": "E: bad\nx",
            "params": {"x": 0.9},
        },
    ]
    plan = {"round": 0, "ranking": {"order": ["all"]}, "serving": {"cpu": ["all"]}}
    write_report(spec, history, [plan], tmp_path / "r.md")
    text = (tmp_path / "r.md").read_text()
    assert "1 failed" in text and "`all.1`: E: bad" in text and "0.3" in text
    table = (tmp_path / "subspaces.csv").read_text().splitlines()
    assert table[1].startswith("all,1.099,2,1,0.3")
