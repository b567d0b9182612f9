"""Failed trials made visible (issue 30, part 5): declared failures are results, any other
exception fails the trial's job (``max_failed_trials: 0``, the default) or counts toward the
limit, and a search ends with a line counting failures and naming the first."""

import os

import pytest

import snakemake_shadho as shadho
from snakemake_shadho._failures import is_undeclared


def trial(name="cnn.0"):
    sub, tid = name.split(".")
    return {
        "trial": name,
        "round": 0,
        "subspace": sub,
        "hw_class": "fast",
        "tid": int(tid),
        "vals": {},
        "params": {"x": 1},
    }


def diverged(params):
    raise shadho.TrialFailed("training diverged")


def typo(params):
    raise AttributeError("module 'torch' has no attribute 'ops'")


def test_declared_failures_are_records_and_never_raise():
    record = shadho.evaluate(diverged, trial())
    assert record["status"] == "fail" and record["declared"] is True
    assert "training diverged" in record["error"]
    nan, _ = shadho.run_trial(lambda p: float("nan"), trial(), {}, raise_undeclared=True)
    assert nan["status"] == "fail" and nan["declared"] is True and "non-finite" in nan["error"]
    assert not is_undeclared(record) and not is_undeclared(nan)


def test_an_undeclared_exception_is_a_record_or_raises_with_the_trial_named():
    record = shadho.evaluate(typo, trial("cnn.3"))
    assert record["status"] == "fail" and record["declared"] is False and is_undeclared(record)
    with pytest.raises(AttributeError, match="torch") as raised:
        shadho.run_trial(typo, trial("cnn.3"), {}, raise_undeclared=True)
    notes = "\n".join(getattr(raised.value, "__notes__", []))
    assert "trial cnn.3" in notes and "TrialFailed" in notes and "max_failed_trials" in notes
    ok, failure = shadho.run_trial(lambda p: 0.5, trial(), {}, raise_undeclared=True)
    assert ok["status"] == "ok" and failure is None and "declared" not in ok


def test_the_limit_counts_only_undeclared_failures():
    records = [
        shadho.evaluate(typo, trial("cnn.0")),
        shadho.evaluate(diverged, trial("cnn.1")),
        shadho.evaluate(lambda p: 0.1, trial("svm.2")),
        shadho.evaluate(typo, trial("cnn.4")),
    ]
    shadho.check_failures(records, 2)
    with pytest.raises(shadho.TrialsFailedError) as raised:
        shadho.check_failures(records, 1, "a rerun redoes those trials")
    message = str(raised.value)
    assert message.startswith("2 trial(s) failed with an error the objective does not declare")
    assert "max_failed_trials: 1" in message and "first: trial cnn.0 (cnn on fast)" in message
    assert "AttributeError: module 'torch' has no attribute 'ops'" in message
    assert message.endswith("a rerun redoes those trials") and "\n" not in message
    # Records from before `declared` existed were data then: they do not count.
    old = {k: v for k, v in records[0].items() if k != "declared"}
    shadho.check_failures([old], 0)


def test_the_summary_line_counts_and_names_the_first_error():
    ok = shadho.evaluate(lambda p: 0.1, trial("svm.0"))
    assert shadho.failure_summary([ok, ok]) == "shadho: 2 trials, 0 failed"
    records = [ok, shadho.evaluate(diverged, trial("cnn.1")), shadho.evaluate(typo, trial("cnn.2"))]
    line = shadho.failure_summary(records, 3)
    assert line == (
        "shadho: 3 trials, 2 failed; first: trial cnn.1: TrialFailed: training diverged; "
        "1 of them with an error the objective does not declare (max_failed_trials: 3)"
    )


class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("no")


def test_odd_exceptions_are_errors_with_the_trial_named():
    """The red team's: sys.exit in an objective, GeneratorExit, an exception whose str()
    raises, and KeyboardInterrupt (maybe a real Ctrl-C: raised, never recorded)."""

    def leave(code):
        def objective(params):
            raise SystemExit(code)

        return objective

    for code in (0, "CUDA is not available"):
        record = shadho.evaluate(leave(code), trial("b.0"))
        assert record["status"] == "fail" and record["declared"] is False
        assert f"the objective called sys.exit({code!r})" in record["error"]
        with pytest.raises(RuntimeError, match="sys.exit") as raised:
            shadho.run_trial(leave(code), trial("b.0"), {}, raise_undeclared=True)
        assert "trial b.0" in "\n".join(raised.value.__notes__)

    def closed(params):
        raise GeneratorExit

    assert is_undeclared(shadho.evaluate(closed, trial("b.1")))

    def unprintable(params):
        raise Unprintable

    record = shadho.evaluate(unprintable, trial("b.2"))
    assert record["error"].startswith("Unprintable: <exception str() failed>")

    def interrupted(params):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt) as raised:
        shadho.evaluate(interrupted, trial("b.3"))
    assert "trial b.3" in "\n".join(raised.value.__notes__)


def test_an_objective_that_changes_folder_leaves_the_trial_where_it_was(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()

    def wanders(params):
        os.chdir("sub")
        return 0.5

    assert shadho.evaluate(wanders, trial())["status"] == "ok"
    assert os.getcwd() == str(tmp_path)


@pytest.mark.parametrize("value", [-1, 1.5, True, "2"])
def test_max_failed_trials_is_a_spec_setting(value):
    base = {"space": {"x": {"uniform": [0, 1]}}, "hardware": {"cpu": {}}}
    assert shadho.load_spec(base).max_failed_trials == 0
    assert shadho.load_spec({**base, "max_failed_trials": 3}).max_failed_trials == 3
    with pytest.raises(shadho.SpecError, match="max_failed_trials"):
        shadho.load_spec({**base, "max_failed_trials": value})
