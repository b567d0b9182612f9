"""Worker lifecycle (issue 12, part 3): a job's own exits fail it once, a C call holding the
GIL is not a hang, no process a job started outlives its worker, Ctrl-C loses no worker.

Runs the workflow tests/integration/workflows/sticky_lifecycle (one job per case, chosen by
the output name: see its scripts/job.py)."""

import os
import signal
import time

import pytest

pytestmark = pytest.mark.integration


def marker_pid(wd, name: str, poll) -> int:
    path = wd / "markers" / name
    return int(poll(lambda: path.exists() and path.read_text(), 120, f"markers/{name}"))


def test_a_script_that_ends_its_process_fails_once_with_the_cause(workflow, run_snakemake):
    """os._exit(1), a SIGKILL the script sends itself, a segfault in C, an uncaught
    KeyboardInterrupt: each fails its job once with the cause, like --executor local; none is
    requeued. os._exit(0) after writing the output succeeds, as it does under local."""
    wd = workflow("sticky_lifecycle")
    cases = ["exit1", "selfkill", "crash", "kbint", "exit0"]
    run = run_snakemake(wd, "--keep-going", *[f"out/{c}.txt" for c in cases])
    assert run.returncode != 0
    assert "exit status 1 (os._exit" in run.output, run.output
    assert "sent its own process SIGKILL" in run.output
    assert "crashed with SIGSEGV" in run.output
    assert "KeyboardInterrupt" in run.output
    assert run.read("out/exit0.txt") == "done\n"
    for case in ["exit1", "selfkill", "crash", "kbint"]:
        assert not (wd / "out" / f"{case}.txt").exists()
    assert run.events("requeued") == [] and run.events("worker_lost") == []
    invocations = run.events("invocation")
    assert len(invocations) == 5  # each job ran exactly once
    assert sum(not r["ok"] for r in invocations) == 4
    assert "sticky: 5 invocations (4 failed)" in run.output
    ended = {r["fate"] for r in run.events("worker_ended")}
    assert ended == {"fail", "succeed"}
    # the end of the run names the targets it did not make, and those it did (issue 31)
    last = [line for line in run.output.splitlines() if line.startswith("sticky: not made: ")]
    assert last and "out/exit0.txt" in last[-1].partition("; made: ")[2], run.output[-2000:]


def test_a_c_call_holding_the_gil_past_the_heartbeat_timeout_is_alive(workflow, run_snakemake):
    """Two C calls hold the GIL for over twice --sticky-heartbeat-timeout 2 (5 s asked; the
    sum aims at 1.5x that), so the heartbeat thread is starved: sum(range(N)) computing, libc
    sleep() waiting. Neither worker
    is lost: a fresh run would finish both."""
    wd = workflow("sticky_lifecycle")
    run = run_snakemake(
        wd,
        "out/gil.txt",
        "out/gilwait.txt",
        "--sticky-heartbeat-timeout",
        "2",
        "--config",
        "seconds_held=5",
    )
    assert run.returncode == 0, run.output
    for case in ["gil", "gilwait"]:
        held = float(run.read(f"out/{case}.txt").split()[1])
        assert held > 4, f"{case}: the C call only held the GIL for {held} s"
    assert run.events("worker_lost") == [] and run.events("requeued") == []
    invocations = run.events("invocation")
    assert len(invocations) == 2
    assert all(r["ok"] and r["exec_s"] > 4 for r in invocations)
    results = [line for line in run.output.splitlines() if line.startswith("sticky: results: ")]
    assert results and {"out/gil.txt", "out/gilwait.txt"} == set(results[-1][17:].split(", "))


@pytest.mark.parametrize(
    ("victim", "sig", "cause"),
    [
        ("invocation process", signal.SIGKILL, "killed by SIGKILL from outside the job"),
        ("supervisor", signal.SIGTERM, "the worker was sent SIGTERM (scancel, preemption"),
    ],
)
def test_a_killed_workers_children_die_before_its_invocation_is_requeued(
    workflow, start_snakemake, poll, alive, victim, sig, cause
):
    """The script forked a child that appends to the output four times a second; then its
    worker is killed (SIGKILL to the process running the script, or SIGTERM to the worker as
    a scheduler preempting it would): the child dies first, the invocation is requeued with
    the cause named, and the rerun's output stays clean."""
    wd = workflow("sticky_lifecycle")
    bg = start_snakemake(wd, "--retries", "0", "out/orphan.txt")
    worker = marker_pid(wd, "pid-orphan", poll)
    child = marker_pid(wd, "child-orphan", poll)
    output = wd / "out" / "orphan.txt"
    poll(lambda: output.exists() and "ORPHAN" in output.read_text(), 30, "the child to write")
    if victim == "supervisor":
        (connected,) = [r for r in bg.events("worker_connected") if r["pid"] == worker]
        (started,) = [r for r in bg.events("worker_started") if r["worker"] == connected["worker"]]
        os.kill(started["pid"], sig)
    else:
        os.kill(worker, sig)
    run = bg.finish()
    assert run.returncode == 0, run.output
    assert not alive(child), "the killed worker's child outlived it"
    time.sleep(1.0)  # four more appends, were it alive
    assert run.read("out/orphan.txt") == "orphan\n"
    assert len(run.events("requeued")) == 1
    (lost,) = run.events("worker_lost")
    assert cause in lost["reason"], lost


def test_workers_children_die_when_snakemake_is_sigkilled(workflow, start_snakemake, poll, alive):
    wd = workflow("sticky_lifecycle")
    bg = start_snakemake(wd, "out/sleeper.txt", cores=1)
    worker = marker_pid(wd, "pid-sleeper", poll)
    child = marker_pid(wd, "child-sleeper", poll)
    bg.proc.kill()
    bg.finish(timeout=30)
    poll(lambda: not alive(worker) and not alive(child), 20, "the worker and its child to die")


def test_ctrl_c_stops_workers_and_their_children_without_losing_or_requeuing(
    workflow, start_snakemake, poll, alive
):
    wd = workflow("sticky_lifecycle")
    bg = start_snakemake(wd, "out/sleeper.txt", cores=1)
    worker = marker_pid(wd, "pid-sleeper", poll)
    child = marker_pid(wd, "child-sleeper", poll)
    bg.proc.send_signal(signal.SIGINT)
    run = bg.finish(timeout=60)
    assert run.returncode != 0
    assert "lost worker" not in run.output and "requeued" not in run.output, run.output
    assert run.events("worker_lost") == [] and run.events("requeued") == []
    poll(lambda: not alive(worker) and not alive(child), 20, "the worker and its child to die")
    assert not (wd / "out" / "sleeper.txt").exists()
    # Issue 31: one line says what stopped, what is left and that a rerun continues.
    assert (
        "sticky: run stopped: 1 running invocation(s) ended and their partial outputs removed; "
        "0 of 1 jobs are done; run the same command again to continue" in run.output
    ), run.output


def test_two_quick_ctrl_c_end_with_the_one_line_and_no_traceback(workflow, start_snakemake, poll):
    """Issue 31's red team, case 27: two SIGINTs 10 ms apart (two key presses, or `timeout`
    forwarding its own) printed a KeyboardInterrupt traceback from inside the executor's
    cancel after the run-stopped line."""
    wd = workflow("sticky_lifecycle")
    bg = start_snakemake(wd, "out/sleeper.txt", cores=1)
    marker_pid(wd, "child-sleeper", poll)
    bg.proc.send_signal(signal.SIGINT)
    time.sleep(0.01)
    bg.proc.send_signal(signal.SIGINT)
    run = bg.finish(timeout=60)
    assert run.returncode != 0
    assert "Traceback" not in run.output and "KeyboardInterrupt" not in run.output, run.output
    assert run.output.count("sticky: run stopped:") == 1, run.output


def forked(wd):
    """The lifecycle workflow with its template in fork mode (the default)."""
    templates = wd / "sticky_templates.py"
    text = templates.read_text()
    templates.write_text(
        text.replace('@template("plain", isolation="direct")', '@template("plain")')
    )
    return wd


def test_fork_mode_a_script_that_ends_its_process_ends_only_its_job(workflow, run_snakemake):
    """Fork mode: os._exit(1), a SIGKILL the script sends itself, a segfault, an uncaught
    KeyboardInterrupt end only that invocation's child: the job fails once with the cause, as
    under --executor local, nothing is requeued, and the worker stays warm for the next job;
    os._exit(0) after writing the output succeeds."""
    wd = forked(workflow("sticky_lifecycle"))
    cases = ["exit1", "selfkill", "crash", "kbint", "exit0"]
    run = run_snakemake(
        wd, "--keep-going", "--sticky-max-workers", "1", *[f"out/{c}.txt" for c in cases]
    )
    assert run.returncode != 0
    assert "exit status 1 (os._exit" in run.output, run.output
    assert "sent its own process SIGKILL" in run.output
    assert "crashed with SIGSEGV" in run.output
    assert "KeyboardInterrupt" in run.output
    assert run.read("out/exit0.txt") == "done\n"
    assert run.events("requeued") == [] and run.events("worker_lost") == []
    assert run.events("worker_ended") == []  # the worker never ran the scripts itself
    invocations = run.events("invocation")
    assert len(invocations) == 5 and sum(not r["ok"] for r in invocations) == 4
    assert len({r["worker"] for r in invocations}) == 1
    assert len(run.events("state_built")) == 1


def test_fork_mode_an_invocation_killed_from_outside_is_requeued_after_its_children_die(
    workflow, start_snakemake, poll, alive
):
    """Fork mode: SIGKILL to the child running the script (an OOM kill, say): what it started
    dies first, the invocation is requeued on the same warm worker, the rerun is clean."""
    wd = forked(workflow("sticky_lifecycle"))
    bg = start_snakemake(wd, "--retries", "0", "out/orphan.txt")
    invocation = marker_pid(wd, "pid-orphan", poll)
    child = marker_pid(wd, "child-orphan", poll)
    output = wd / "out" / "orphan.txt"
    poll(lambda: output.exists() and "ORPHAN" in output.read_text(), 30, "the child to write")
    os.kill(invocation, signal.SIGKILL)
    run = bg.finish()
    assert run.returncode == 0, run.output
    assert not alive(child), "the killed invocation's child outlived it"
    time.sleep(1.0)
    assert run.read("out/orphan.txt") == "orphan\n"
    assert len(run.events("requeued")) == 1
    (lost,) = run.events("invocation_lost")
    assert "killed by SIGKILL from outside the job" in lost["reason"], lost
    assert run.events("worker_lost") == []
    assert len(run.events("state_built")) == 1  # requeued on the same warm worker
