"""Running trials (real digits objectives), the CLI's error handling, and the report."""

import json

import pytest

import snakemake_shadho as shadho
from snakemake_shadho import digits
from snakemake_shadho.report import write_report


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


def test_a_spec_file_that_is_not_yaml_is_one_line_with_its_place(tmp_path):
    from snakemake_shadho._cli import read_spec

    bad = tmp_path / "c.yaml"
    bad.write_text("hpo:\n  rounds: [1\n")
    with pytest.raises(shadho.ShadhoError) as err:
        read_spec(str(bad))
    (line,) = str(err.value).splitlines()
    assert line.startswith(f"{bad}, line 3, column 1: not valid YAML (")
    with pytest.raises(shadho.ShadhoError) as err:
        read_spec(str(tmp_path / "nosuch.yaml"))
    assert (
        str(err.value)
        == f"cannot read the spec file {tmp_path / 'nosuch.yaml'}: No such file or directory"
    )
