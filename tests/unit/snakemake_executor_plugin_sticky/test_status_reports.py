"""Issue 17, part 2: the manager reports invocation outcomes in one pass per poll of its I/O
thread, outside its lock, in the order they arrived; one callback's failure does not stop
the others. (Snakemake then postprocesses every job reported since its last round in one
pass: ``JobScheduler._finish_jobs``.) The manager is built without its threads or sockets."""

import logging
import threading
from types import SimpleNamespace

import pytest
from snakemake_interface_executor_plugins.executors.base import SubmittedJobInfo

from snakemake_executor_plugin_sticky.executor import Executor
from snakemake_executor_plugin_sticky.manager import Manager


def bare_manager(on_done):
    manager = object.__new__(Manager)
    manager._lock = threading.Lock()  # a plain lock, so that a test can see it is free
    manager._pending_callbacks = []
    manager.on_done = on_done
    return manager


def test_the_outcomes_of_one_pass_are_reported_together_in_order_outside_the_lock():
    reported = []

    def on_done(inv_id, ok, error, done):
        assert not manager._lock.locked()
        reported.append((inv_id, ok, error))

    manager = bare_manager(on_done)
    with manager._lock:  # as _handle and _apply collect them: under the lock, nothing reported
        manager._callback(3, True, None, None)
        manager._callback(1, False, "exit 1", None)
        manager._callback(2, True, None, None)
    assert reported == []
    manager._run_callbacks()
    assert reported == [(3, True, None), (1, False, "exit 1"), (2, True, None)]
    manager._run_callbacks()  # each outcome once
    assert len(reported) == 3


def test_a_failing_report_is_logged_and_the_others_still_go_out(caplog):
    reported = []

    def on_done(inv_id, ok, error, done):
        if inv_id == 1:
            raise RuntimeError("boom")
        reported.append(inv_id)

    manager = bare_manager(on_done)
    for inv_id in (1, 2):
        manager._callback(inv_id, True, None, None)
    with caplog.at_level(logging.ERROR):
        manager._run_callbacks()
    assert reported == [2]
    assert "reporting an invocation's outcome to Snakemake failed" in caplog.text


@pytest.mark.parametrize("ok", [True, False])
def test_one_report_per_job_as_snakemake_s_interface_asks(ok):
    """The executor reports each job once, through the plugin interface (no batch call
    exists there; Snakemake's scheduler queues each report and runs one round per report)."""
    calls = []
    executor = object.__new__(Executor)
    executor._ckpt = None
    executor.report_job_success = lambda info: calls.append(("success", info.job))
    executor.report_job_error = lambda info, msg=None: calls.append(("error", info.job, msg))
    jobs = [SimpleNamespace(benchmark=None) for _ in range(3)]
    executor._jobs = {
        i: SubmittedJobInfo(job=j, external_jobid=f"sticky:{i}") for i, j in enumerate(jobs)
    }
    for i in range(3):
        executor._on_done(i, ok, None if ok else "failed", None)
    executor._on_done(0, ok, None, None)  # a second outcome for the same invocation: ignored
    expected = [("success", j) for j in jobs] if ok else [("error", j, "failed") for j in jobs]
    assert calls == expected


def test_libraries_a_forked_job_imports_are_said_once_per_template():
    """Issue 25: a forked job that imports installed libraries its template lacks imports them
    again in every job; the run says so once per template, naming the costliest three."""
    from snakemake_executor_plugin_sticky._protocol import InvocationDone

    lines = []
    executor = object.__new__(Executor)
    executor._ckpt = None
    executor._told_imports = set()
    executor.logger = SimpleNamespace(info=lines.append, warning=lines.append)
    executor.report_job_success = lambda info: None

    def job(template):
        return SimpleNamespace(
            benchmark=None,
            resources=SimpleNamespace(sticky=template, get=lambda k, d=None: template),
            rule=SimpleNamespace(name="trial"),
        )

    imported = ["torch", "sympy", "triton", "mpmath", "tqdm"]
    jobs = [job("digits"), job("digits"), job("minilm")]
    executor._jobs = {
        i: SubmittedJobInfo(job=j, external_jobid=f"sticky:{i}") for i, j in enumerate(jobs)
    }
    for i in range(3):
        executor._on_done(i, True, None, InvocationDone(i, True, imported=imported[: 5 - i]))
    assert lines == [
        "sticky: template 'digits': a job of rule trial imported torch, sympy, triton and 2 "
        "more libraries, which the template does not; every forked job imports them again "
        "(as a fresh process would): import them while building the template to load them "
        "once per worker (docs/sticky.md, 'Warm up the template')",
        "sticky: template 'minilm': a job of rule trial imported torch, sympy, triton, which "
        "the template does not; every forked job imports them again (as a fresh process "
        "would): import them while building the template to load them once per worker "
        "(docs/sticky.md, 'Warm up the template')",
    ]
