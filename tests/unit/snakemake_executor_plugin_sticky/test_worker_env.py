"""A worker's environment: templates build single-threaded whatever the shell exports, and
without native pools a fork would inherit."""

from snakemake_executor_plugin_sticky._pilot_env import PILOT_NAMES, pilot_environment
from snakemake_executor_plugin_sticky._worker_env import (
    THREAD_VARIABLES,
    building,
    worker_environment,
)


def test_the_shells_thread_counts_do_not_reach_a_template():
    shell = {"OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "8", "HOME": "/home/u"}
    env = worker_environment(shell)
    assert {name: env[name] for name in THREAD_VARIABLES} == dict.fromkeys(THREAD_VARIABLES, "1")
    assert env["HOME"] == "/home/u"
    assert shell["OPENBLAS_NUM_THREADS"] == "2"  # the caller's mapping is left alone


def test_what_the_caller_sets_for_its_workers_is_kept():
    env = worker_environment({"OMP_NUM_THREADS": "8"}, {"OMP_NUM_THREADS": "4", "X": "y"})
    assert env["OMP_NUM_THREADS"] == "4" and env["X"] == "y"
    assert env["OPENBLAS_NUM_THREADS"] == "1"


def test_a_slurm_pilot_receives_every_thread_variable():
    assert set(THREAD_VARIABLES) <= set(PILOT_NAMES)
    exported = pilot_environment(worker_environment({"PATH": "/bin"})).export
    assert set(THREAD_VARIABLES) <= set(exported)


def test_a_build_runs_without_the_tokenizers_pool_and_jobs_do_not_see_the_switch():
    env = {"HOME": "/h"}
    with building(env):
        assert env["TOKENIZERS_PARALLELISM"] == "false"
    assert env == {"HOME": "/h"}  # a job forked after the build starts its own pool


def test_what_the_shell_or_the_build_sets_is_kept():
    shell = {"TOKENIZERS_PARALLELISM": "true"}
    with building(shell):
        assert shell["TOKENIZERS_PARALLELISM"] == "true"
    assert shell == {"TOKENIZERS_PARALLELISM": "true"}
    env: dict[str, str] = {}
    with building(env):
        env["TOKENIZERS_PARALLELISM"] = "1"  # the template's own choice
    assert env == {"TOKENIZERS_PARALLELISM": "1"}


def test_a_failed_build_leaves_the_environment_as_it_found_it():
    env: dict[str, str] = {}
    try:
        with building(env):
            raise RuntimeError("build failed")
    except RuntimeError:
        pass
    assert env == {}
