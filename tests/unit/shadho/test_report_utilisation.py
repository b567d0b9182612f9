"""The report's utilisation per class (busy time over workers x wall time) and measured speeds
(issue 16 parts 1 and 2), and the digits SVM running its folds on threads (part 2)."""

import pandas as pd
import psutil

import snakemake_shadho as shadho
from snakemake_shadho import digits
from snakemake_shadho.report import class_table, write_report


def _record(name, sub, cls, start, end, vals):
    return {
        "trial": name,
        "round": 0,
        "subspace": sub,
        "hw_class": cls,
        "status": "ok",
        "loss": 0.1,
        "duration_s": end - start,
        "started": start,
        "finished": end,
        "vals": vals,
        "params": vals,
    }


def _spec():
    return shadho.load_spec(
        {
            "space": {"m": {"exclusive": {"a": {"x": {"uniform": [0, 1]}}, "b": {"k": 1}}}},
            "hardware": {"fast": {"count": 2, "speed": 2}, "slow": {"count": 1, "speed": 1}},
        }
    )


def test_utilisation_hand_computed():
    """Wall time 0..10 s. fast (2 workers) is busy 4 + 6 = 10 s of 20: 0.5; slow (1 worker)
    8 s of 10: 0.8."""
    history = [
        _record("a.0", "a", "fast", 0.0, 4.0, {"x": 0.5}),
        _record("a.1", "a", "fast", 4.0, 10.0, {"x": 0.5}),
        _record("b.0", "b", "slow", 1.0, 9.0, {}),
    ]
    table = class_table(_spec(), history).set_index("hw_class")
    assert table.loc["fast", "utilisation"] == 0.5
    assert table.loc["slow", "utilisation"] == 0.8


def test_report_shows_measured_speeds_and_flags_a_class_slower_than_declared(tmp_path):
    """'fast' is declared twice as fast but takes 10 s where 'slow' takes 1 s on the same
    configurations: the report's speed table and its class table say so."""
    history = []
    for i in range(4):
        vals = {"x": i / 4}
        history.append(_record(f"a.{2 * i}", "a", "fast", 0.0, 10.0, vals))
        history.append(_record(f"a.{2 * i + 1}", "a", "slow", 0.0, 1.0, vals))
    plan = {"round": 0, "ranking": {"order": ["a", "b"]}, "serving": {"fast": ["a"]}}
    write_report(_spec(), history, [plan], tmp_path / "r.md")
    text = (tmp_path / "r.md").read_text()
    assert "## Measured speeds" in text and "Slower than declared:** class `fast`" in text
    speeds = pd.read_csv(tmp_path / "speeds.csv").set_index(["hw_class", "subspace"])
    assert speeds.loc[("fast", "a"), "measured"] < speeds.loc[("slow", "a"), "measured"]
    classes = pd.read_csv(tmp_path / "classes.csv").set_index("hw_class")
    assert classes.loc["fast", "measured_speed"] < classes.loc["slow", "measured_speed"]
    assert "utilisation" in classes.columns


def test_svm_folds_run_on_threads_not_a_process_pool():
    """Issue 16: cross_val_score(n_jobs=2) started a process pool per trial, making the
    2-thread class 10-50x slower than the 1-thread one. The folds now run on threads: no child
    process appears, and the loss is the single-threaded one."""
    data = digits.load_data(n_samples=200)
    params = {"kernel": "rbf", "C": 10.0, "gamma": 0.05}
    me = psutil.Process()
    before = {p.pid for p in me.children(recursive=True)}
    two = digits.svm_loss(params, data, folds=2, threads=2)
    after = {p.pid for p in me.children(recursive=True)}
    assert after <= before
    assert two["loss"] == digits.svm_loss(params, data, folds=2, threads=1)["loss"]
