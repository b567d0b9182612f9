"""The lifecycle rules, pure: liveness from heartbeats and OS samples, exit causes, and what
the scheduler does with a worker's end (no processes)."""

import signal

from hypothesis import given, settings
from hypothesis import strategies as st

from snakemake_executor_plugin_sticky._liveness import (
    COMPUTING_CPU_SHARE,
    CRASH_SIGNALS,
    Fate,
    ProcSample,
    Verdict,
    classify_exit,
    judge,
    parse_proc_stat,
    why_not_alive,
)
from snakemake_executor_plugin_sticky._scheduling import (
    FailInvocation,
    FinishInvocation,
    Requeue,
    StickyScheduler,
    StopWorker,
)
from tests.conftest import examples


def samples(state: str, cpu_per_second: float, seconds: int = 4) -> list[ProcSample]:
    return [ProcSample(float(t), state, t * cpu_per_second) for t in range(seconds + 1)]


def test_proc_stat_is_parsed_even_with_parentheses_in_the_command_name():
    text = "4242 (python (x) y) R 1 4242 4242 0 -1 4194304 10 0 0 0 250 50 0 0 20 0 3 0"
    sample = parse_proc_stat(text, 7.0, 100)
    assert (sample.state, sample.cpu_seconds, sample.pgrp, sample.at) == ("R", 3.0, 4242, 7.0)


def test_a_process_holding_the_gil_is_alive_and_only_a_stopped_one_is_not():
    stale = -100.0  # the heartbeat thread has not run for 100 s
    assert judge(4.0, stale, samples("R", 1.0)) is Verdict.COMPUTING
    assert judge(4.0, stale, samples("R", 0.3)) is Verdict.COMPUTING  # a crowded node
    # A C call waiting with the GIL held: the starved heartbeat thread wakes, ~1% CPU.
    assert judge(4.0, stale, samples("S", 0.01)) is Verdict.BLOCKED
    assert judge(4.0, stale, samples("D", 0.0)) is Verdict.WAITING_ON_IO
    assert judge(4.0, 3.0, samples("S", 0.0)) is Verdict.BEATING  # idle, heartbeat fine
    assert judge(4.0, 3.0, samples("T", 0.0)) is Verdict.STOPPED  # SIGSTOP beats all
    assert judge(4.0, stale, []) is Verdict.SILENT  # no /proc: heartbeat only
    for alive in (Verdict.COMPUTING, Verdict.BLOCKED, Verdict.WAITING_ON_IO, Verdict.BEATING):
        assert why_not_alive(alive) is None
    assert "stopped" in why_not_alive(Verdict.STOPPED)
    assert why_not_alive(Verdict.SILENT) is not None


@settings(max_examples=examples(300), deadline=None, derandomize=True)
@given(
    beat_age=st.floats(0, 1000),
    state=st.sampled_from("RSDTtZI"),
    cpu_share=st.floats(0, 2),
)
def test_generated_samples_are_alive_exactly_by_the_rule(beat_age, state, cpu_share):
    verdict = judge(4.0, 4.0 - beat_age, samples(state, cpu_share))
    assert (why_not_alive(verdict) is None) == (state not in "Tt")
    if state not in "Tt" and beat_age > 2.5 and state != "D":
        computing = cpu_share >= COMPUTING_CPU_SHARE
        assert verdict is (Verdict.COMPUTING if computing else Verdict.BLOCKED)


def test_the_jobs_own_exits_fail_once_and_outside_kills_requeue():
    assert classify_exit(exit_status=1, signal_number=None).fate is Fate.FAIL
    assert "exit status 1" in classify_exit(exit_status=1, signal_number=None).cause
    assert classify_exit(exit_status=0, signal_number=None).fate is Fate.SUCCEED
    own = classify_exit(exit_status=None, signal_number=9, self_signal=9)
    assert own.fate is Fate.FAIL and "sent its own process SIGKILL" in own.cause
    for sig in CRASH_SIGNALS:
        assert classify_exit(exit_status=None, signal_number=sig).fate is Fate.FAIL
    assert classify_exit(exit_status=None, signal_number=signal.SIGINT).fate is Fate.FAIL
    killed = classify_exit(exit_status=None, signal_number=9)
    assert killed.fate is Fate.REQUEUE and "SIGKILL from outside" in killed.cause
    oom = classify_exit(exit_status=None, signal_number=9, oom_killed=True)
    assert oom.fate is Fate.REQUEUE and "out-of-memory" in oom.cause
    # The job sent itself SIGTERM, but died of SIGKILL from outside: not its doing.
    assert classify_exit(exit_status=None, signal_number=9, self_signal=15).fate is Fate.REQUEUE
    # The pilot was scancelled/preempted: whatever the child died of, requeue.
    pre = classify_exit(exit_status=1, signal_number=None, terminated_by=signal.SIGTERM)
    assert pre.fate is Fate.REQUEUE and "SIGTERM (scancel, preemption" in pre.cause


def busy_scheduler() -> StickyScheduler:
    s = StickyScheduler(max_workers=2, max_requeues=3)
    s.submit(1, "t", 0.0)
    s.worker_connected("w1", 0.0)
    return s


def test_a_lost_worker_requeues_but_the_jobs_own_exit_ends_it_once():
    s = busy_scheduler()
    out = s.worker_lost("w1", 1.0, "killed by SIGKILL")
    assert Requeue(1, "w1") in out
    s = busy_scheduler()
    out = s.worker_lost("w1", 1.0, "exit status 1", Fate.FAIL)
    assert FailInvocation(1, "exit status 1") in out
    assert not any(isinstance(i, Requeue) for i in out) and 1 not in s.invocations
    s = busy_scheduler()
    assert FinishInvocation(1) in s.worker_lost("w1", 1.0, "status 0", Fate.SUCCEED)


def test_cancel_kills_busy_workers_and_forgets_everything_without_requeue():
    s = StickyScheduler(max_workers=2)
    s.submit(1, "t", 0.0)
    s.submit(2, "t", 0.0)
    s.submit(3, "t", 0.0)  # waits
    s.worker_connected("w1", 0.0)
    s.worker_connected("w2", 0.0)
    s.invocation_done("w2", 2, 1.0)
    s.submit(4, "t", 1.0)  # w2 busy again; 3 queued
    out = s.cancel_all("run cancelled")
    assert sorted(out, key=lambda i: i.worker_id) == [
        StopWorker("w1", "run cancelled", kill=True),
        StopWorker("w2", "run cancelled", kill=True),
    ]
    assert not s.queue and not s.invocations
    # The killed workers' ends are then expected: nothing is requeued or failed.
    assert s.worker_lost("w1", 2.0, "killed") == []
    assert s.worker_lost("w2", 2.0, "killed") == []
