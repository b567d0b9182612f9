"""bench/_pytest_tier.py's reading of pytest's output (bench/unit_tier.py, property_counts.py)."""

from tests.conftest import bench_module

tier = bench_module("_pytest_tier")

# --hypothesis-show-statistics as hypothesis 6.155 prints it (two tests; a reuse phase).
STATISTICS = """\
.....                                                                    [100%]
============================ Hypothesis Statistics =============================
tests/unit/nbrewind/test_stage.py::test_parameters_come_from_config_then_wildcards_then_params:

  - during reuse phase (0.00 seconds):
    - Typical runtimes: ~ 1ms, of which < 1ms in data generation
    - 1 passing examples, 0 failing examples, 0 invalid examples

  - during generate phase (0.04 seconds):
    - Typical runtimes: ~ 1-9 ms, of which ~ 0-4 ms in data generation
    - 6 passing examples, 0 failing examples, 0 invalid examples

  - Stopped because settings.max_examples=6


tests/unit/ckptstore/test_records.py::test_a_store_holding_any_manifest_restores_it_or_runs_the_job:

  - during generate phase (0.09 seconds):
    - Typical runtimes: ~ 4-28 ms, of which ~ 0-21 ms in data generation
    - 14 passing examples, 1 failing examples, 0 invalid examples
    - Events:
      * 16.67%, Retried draw from text(characters(codec='utf-8'), max_size=8) to satisfy filter

  - Stopped because nothing left to do


FAILED tests/unit/ckptstore/test_records.py::test_a_store_holding_any_manifest_restores_it
1 failed, 4 passed, 51 deselected in 0.74s
"""


def test_statistics_give_each_property_tests_examples_and_its_limit():
    ran, stopped = tier.hypothesis_statistics(STATISTICS)
    stage = (
        "tests/unit/nbrewind/test_stage.py::"
        "test_parameters_come_from_config_then_wildcards_then_params"
    )
    store = (
        "tests/unit/ckptstore/test_records.py::"
        "test_a_store_holding_any_manifest_restores_it_or_runs_the_job"
    )
    assert ran == {stage: 7, store: 15}
    assert stopped == {stage: 6}


def test_the_summary_line_gives_the_outcome_counts():
    assert tier.summary_counts(STATISTICS) == {"failed": 1, "passed": 4, "deselected": 51}
    assert tier.summary_counts("x\n813 passed, 2 skipped in 17.20s\n") == {
        "passed": 813,
        "skipped": 2,
    }
    assert tier.summary_counts("1 error in 0.10s\n") == {"errors": 1}
    assert tier.summary_counts("ERROR: file or directory not found: tests/nope\n") == {}


def test_a_run_is_ok_only_when_it_passed_something_and_exited_zero():
    run = tier.TierRun("unit", 1.0, 1.0, 0, {"passed": 3})
    assert run.ok
    assert not tier.TierRun("unit", 1.0, 1.0, 1, {"passed": 3, "failed": 1}).ok
    assert not tier.TierRun("unit", 1.0, 1.0, 5, {}).ok  # nothing collected


def test_a_cached_run_writes_bytecode_under_its_own_prefix_and_a_cold_one_writes_none(
    monkeypatch, tmp_path
):
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    warm = tier.bytecode_env(tmp_path / "pyc")
    assert "PYTHONDONTWRITEBYTECODE" not in warm
    assert warm["PYTHONPYCACHEPREFIX"] == str(tmp_path / "pyc")
    monkeypatch.setenv("PYTHONPYCACHEPREFIX", "/elsewhere")
    cold = tier.bytecode_env(None)
    assert cold["PYTHONDONTWRITEBYTECODE"] == "1" and "PYTHONPYCACHEPREFIX" not in cold
