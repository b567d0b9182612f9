"""Pure rules of a worker's lifecycle: is it alive, and why did it end.

The worker's supervisor (:mod:`.supervisor`) samples ``/proc/<pid>/stat`` of the process that
runs invocations and reads the time of that process's last Python heartbeat; :func:`judge`
turns those samples into a verdict without needing the GIL of the judged process. When that
process ends, :func:`classify_exit` says whether the job's own code ended it (the job fails
once, like under ``--executor local``) or something else did (the invocation is requeued).
Nothing here does I/O.
"""

import signal
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Optional

PYTHON_BEAT_GRACE = 2.5
"""Seconds after its last Python heartbeat (one per second) a process counts as beating."""

COMPUTING_CPU_SHARE = 0.05
"""CPU seconds per wall second above which a silent process counts as computing (a C call
holding the GIL uses a core, or what a crowded node leaves it) rather than blocked (a C call
waiting with the GIL held uses about 1%: the starved heartbeat thread waking). Both are alive;
the distinction only words the verdict."""

CPU_WINDOW = 3.0
"""Seconds of CPU samples that decide whether a silent process computes."""

CRASH_SIGNALS = frozenset(
    {signal.SIGSEGV, signal.SIGBUS, signal.SIGILL, signal.SIGFPE, signal.SIGABRT}
)
"""Signals a process raises through its own faults (C code it called)."""


@dataclass(frozen=True)
class ProcSample:
    """One reading of ``/proc/<pid>/stat``."""

    at: float
    state: str
    cpu_seconds: float
    pgrp: int = 0


def parse_proc_stat(text: str, at: float, ticks_per_second: float = 100.0) -> ProcSample:
    """A :class:`ProcSample` from the text of ``/proc/<pid>/stat``.

    >>> parse_proc_stat("42 (a) b) R 1 42 42 0 -1 0 0 0 0 0 150 50 0 0", 1.0).cpu_seconds
    2.0
    """
    fields = text[text.rindex(")") + 2 :].split()
    # After "pid (comm)": state ppid pgrp session tty tpgid flags minflt cminflt majflt
    # cmajflt utime stime ...
    utime, stime = int(fields[11]), int(fields[12])
    return ProcSample(at, fields[0], (utime + stime) / ticks_per_second, int(fields[2]))


class Verdict(Enum):
    BEATING = "beating"
    """Its Python heartbeat thread runs."""
    COMPUTING = "computing"
    """Silent, but using CPU: a C call holding the GIL."""
    WAITING_ON_IO = "waiting on I/O"
    BLOCKED = "blocked"
    """Silent and idle: a C call waiting with the GIL held (or deadlocked: a fresh run would
    wait just as long)."""
    STOPPED = "stopped"
    """SIGSTOP or a debugger: the only verdict that is not alive."""
    SILENT = "silent"
    """No OS view of the process (no ``/proc``) and no Python heartbeat."""


def judge(now: float, python_beat_at: float, samples: Sequence[ProcSample]) -> Verdict:
    """What the invocation process is doing, from its heartbeat and OS samples.

    A process that runs is alive, whether or not its heartbeat thread gets the GIL: a fresh
    ``python script.py`` would be left to finish a long C call too. It is not alive when
    stopped; without ``/proc`` (not Linux) only the Python heartbeat can tell."""
    latest = samples[-1] if samples else None
    if latest is not None and latest.state in ("T", "t"):
        return Verdict.STOPPED
    if now - python_beat_at <= PYTHON_BEAT_GRACE:
        return Verdict.BEATING
    if latest is None:
        return Verdict.SILENT
    if latest.state == "D":
        return Verdict.WAITING_ON_IO
    window = [s for s in samples if s.at >= latest.at - CPU_WINDOW]
    first = window[0]
    span = latest.at - first.at
    if span > 0 and (latest.cpu_seconds - first.cpu_seconds) / span >= COMPUTING_CPU_SHARE:
        return Verdict.COMPUTING
    return Verdict.BLOCKED


def why_not_alive(verdict: Verdict) -> Optional[str]:
    """What to tell the user about a process that is not alive (None if it is)."""
    if verdict is Verdict.STOPPED:
        return "the worker process is stopped (SIGSTOP or a debugger)"
    if verdict is Verdict.SILENT:
        return "the worker process's heartbeat thread is silent (no /proc to look further)"
    return None


class Fate(Enum):
    """What becomes of the invocation a worker was running when its process ended."""

    SUCCEED = "succeed"
    """The job's code ended the process with status 0: a fresh run would have succeeded."""
    FAIL = "fail"
    """The job's code ended the process otherwise: the job fails once, with the cause."""
    REQUEUE = "requeue"
    """Something else ended it (kill, preemption, OOM): run the invocation elsewhere."""


@dataclass(frozen=True)
class ExitCause:
    fate: Fate
    cause: str


def signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def classify_exit(
    *,
    exit_status: Optional[int],
    signal_number: Optional[int],
    self_signal: Optional[int] = None,
    oom_killed: bool = False,
    terminated_by: Optional[int] = None,
) -> ExitCause:
    """Why the invocation process ended, and what that means for its invocation.

    ``exit_status`` / ``signal_number``: how it ended (one of them is set). ``self_signal``:
    the last signal the job's code sent to its own process or process group (``os.kill``,
    ``os.killpg``; seen by an audit hook). ``oom_killed``: the kernel's OOM killer killed a
    process in the worker's cgroup meanwhile. ``terminated_by``: a signal the supervisor
    itself received (Slurm's scancel, preemption or walltime signal the whole job).
    """
    if terminated_by is not None:
        return ExitCause(
            Fate.REQUEUE,
            f"the worker was sent {signal_name(terminated_by)} (scancel, preemption, walltime "
            "or kill)",
        )
    if signal_number is None:
        status = exit_status or 0
        if status == 0:
            return ExitCause(Fate.SUCCEED, "the job's code ended its process with status 0")
        return ExitCause(
            Fate.FAIL,
            f"the job's code ended its worker process with exit status {status} (os._exit, "
            "or exit() in C code); under --executor local the job fails the same way",
        )
    name = signal_name(signal_number)
    if self_signal == signal_number:
        return ExitCause(
            Fate.FAIL,
            f"the job's code sent its own process {name} (os.kill/os.killpg) and it ended",
        )
    if signal_number in CRASH_SIGNALS:
        return ExitCause(
            Fate.FAIL, f"the job's process crashed with {name} (a fault in code it called)"
        )
    if signal_number == signal.SIGINT:
        # Workers ignore SIGINT and run in their own session: the terminal's Ctrl-C never
        # reaches them, so only the job's code (an uncaught KeyboardInterrupt) ends one so.
        return ExitCause(
            Fate.FAIL, "the job's code ended its process with SIGINT (KeyboardInterrupt)"
        )
    if signal_number == signal.SIGKILL and oom_killed:
        return ExitCause(Fate.REQUEUE, "killed by the kernel's out-of-memory killer (SIGKILL)")
    return ExitCause(
        Fate.REQUEUE, f"killed by {name} from outside the job (kill, a scheduler, or OOM)"
    )
