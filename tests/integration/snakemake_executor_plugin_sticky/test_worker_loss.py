"""Killed workers lose nothing; interrupted runs leave no worker behind."""

import os
import signal

import pytest

pytestmark = pytest.mark.integration


def test_sigkilled_invocation_process_is_requeued_on_its_warm_worker(
    workflow, start_snakemake, poll, alive
):
    """SIGKILL the process running invocation 2 (fork mode: the child forked for it), which
    has already half-written its output: the run still succeeds with --retries 0, the partial
    output is gone, the invocation ran again, on the same warm worker (its template is not
    built again), and the loss is in the metrics. (Direct mode, where that process is the
    worker itself: test_lifecycle.py.)"""
    wd = workflow("sticky_basic")
    bg = start_snakemake(wd, "--retries", "0", "--config", "hang_on=[2]", "count=5", cores=2)
    pid_file = wd / "markers" / "pid-2"
    invocation_pid = int(
        poll(lambda: pid_file.exists() and pid_file.read_text(), 120, "invocation 2 to start")
    )
    assert (wd / "out" / "2.txt").read_text() == "PARTIAL"
    os.kill(invocation_pid, signal.SIGKILL)
    run = bg.finish()
    assert run.returncode == 0, run.output
    assert run.read("out/2.txt") == "2 60\n"
    assert "killed by SIGKILL from outside the job" in run.output and "requeued" in run.output
    (lost,) = run.events("invocation_lost")
    assert run.events("worker_lost") == []
    requeued = run.events("requeued")
    assert len(requeued) == 1 and requeued[0]["id"] == lost["id"]
    done = [r for r in run.events("invocation") if r["id"] == lost["id"]]
    assert len(done) == 1 and done[0]["ok"]
    assert len(run.events("state_built")) <= 2  # no worker rebuilt its template for it
    assert not alive(invocation_pid)


def test_a_worker_killed_while_building_its_template_costs_the_invocation_nothing(
    workflow, start_snakemake, poll, monkeypatch, tmp_path
):
    """Why: a pilot preempted while it loaded its model was charged to the invocation it had
    been sent, which failed once its requeues were used up without its code ever running.
    With --sticky-max-requeues 0, the worker is SIGKILLed during its first template build:
    the invocation is requeued free of charge and the run succeeds."""
    wd = workflow("sticky_basic")
    first_build = tmp_path / "first-build"
    monkeypatch.setenv("TEST_TEMPLATE_SLOW_FIRST", str(first_build))
    bg = start_snakemake(wd, "--sticky-max-requeues", "0", "--config", "count=1", cores=1)
    pid = int(poll(lambda: first_build.exists() and first_build.read_text(), 120, "a build"))
    assert bg.events("state_building") and not bg.events("state_built")
    os.kill(pid, signal.SIGKILL)
    run = bg.finish()
    assert run.returncode == 0, run.output
    assert run.read("out/0.txt") == "0 0\n"
    (lost,) = run.events("worker_lost")
    assert [r["worker"] for r in run.events("requeued")] == [lost["worker"]]
    (done,) = run.events("invocation")
    assert done["ok"] and done["worker"] != lost["worker"]


def test_ctrl_c_stops_every_worker(workflow, start_snakemake, poll, alive):
    """SIGINT to Snakemake while invocations run: it exits, and no worker process is left."""
    wd = workflow("sticky_basic")
    bg = start_snakemake(wd, "--config", "sleep_on=[0,1]", "sleep_seconds=120", "count=2")

    def two_workers_busy() -> list[int]:
        pids = [r["pid"] for r in bg.events("worker_connected")]
        builds = list((wd / "builds").glob("*")) if (wd / "builds").exists() else []
        return pids if len(pids) == 2 and len(builds) == 2 else []

    pids = poll(two_workers_busy, 120, "two workers to build their state")
    bg.proc.send_signal(signal.SIGINT)
    run = bg.finish(timeout=60)
    assert run.returncode != 0, run.output
    poll(lambda: not any(alive(p) for p in pids), 20, "workers to exit")
    assert not (wd / "out" / "0.txt").exists()


def test_workers_exit_when_snakemake_is_killed(workflow, start_snakemake, poll, alive):
    """Even a SIGKILLed Snakemake leaves no worker: workers notice their manager is gone."""
    wd = workflow("sticky_basic")
    bg = start_snakemake(wd, "--config", "sleep_on=[0]", "sleep_seconds=120", "count=1", cores=1)
    pid = poll(
        lambda: [r["pid"] for r in bg.events("worker_connected")], 120, "a worker to connect"
    )[0]
    assert alive(pid)
    bg.proc.kill()
    bg.finish(timeout=30)
    poll(lambda: not alive(pid), 20, "the orphaned worker to exit")
    assert not alive(pid)


def test_hung_worker_is_lost_after_the_heartbeat_timeout(workflow, start_snakemake, poll, alive):
    """A worker that stops answering (SIGSTOP: alive, silent) is declared lost once its
    heartbeats stop, killed, and its invocation runs elsewhere."""
    wd = workflow("sticky_basic")
    bg = start_snakemake(
        wd, "--sticky-heartbeat-timeout", "3", "--config", "hang_on=[1]", "count=3", cores=2
    )
    pid_file = wd / "markers" / "pid-1"
    worker_pid = int(
        poll(lambda: pid_file.exists() and pid_file.read_text(), 120, "invocation 1 to start")
    )
    os.kill(worker_pid, signal.SIGSTOP)
    run = bg.finish()
    assert run.returncode == 0, run.output
    assert run.read("out/1.txt") == "1 30\n"
    (lost,) = run.events("worker_lost")
    assert "no heartbeat for 3 s" in lost["reason"]
    poll(lambda: not alive(worker_pid), 20, "the hung worker to be killed")
