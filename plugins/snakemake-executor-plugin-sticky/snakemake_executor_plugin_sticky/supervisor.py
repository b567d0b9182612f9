"""The supervisor of a sticky worker: the parent of the process that runs its invocations.

A worker process connects to its manager, then forks. The child runs invocations (the rest of
:mod:`.worker`); the parent, this supervisor, stays small and never runs user code. Because it
is a separate process, it keeps working whatever the child does:

- **Liveness without the GIL.** The supervisor sends the heartbeats. It judges the child from
  the child's own Python heartbeat (a timestamp in shared memory) *and* from the OS
  (``/proc/<pid>/stat``: state, CPU time), so a C call that holds the GIL for ten minutes is
  alive, as a fresh run would be left to finish it; a stopped child is not
  (:func:`._liveness.judge`). Silence of the supervisor itself means the node, pilot or
  network is gone.
- **Exit causes.** It is the child's parent, so it learns exactly how the child ended (exit
  status or signal), and whether the job's code caused it: an audit hook in the child notes
  signals the code sends to itself; a cgroup counter tells an OOM kill. It reports a
  :class:`~._protocol.WorkerExited` before it exits (:func:`._liveness.classify_exit`).
- **No orphans.** The worker is the leader of its own process group (a local worker its own
  session). When the child ends, the supervisor SIGKILLs every other process of the group
  (what the job's code started) *before* it reports, so nothing can touch an output once the
  manager requeues or fails the invocation. When the manager goes away (connection broken,
  parent gone), it SIGKILLs the whole group, itself included.

Both processes write to the one manager connection; a lock shared across the fork keeps their
messages whole. Linux gives the full picture; elsewhere (no ``/proc``) liveness falls back to
the Python heartbeat alone.
"""

import functools
import mmap
import multiprocessing
import os
import select
import signal
import struct
import sys
import time
from collections import deque
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, NoReturn, Optional

from ._liveness import Fate, ProcSample, classify_exit, judge, parse_proc_stat, why_not_alive
from ._protocol import Heartbeat, WorkerExited

HEARTBEAT_INTERVAL = 1.0

_BEAT = struct.Struct("d")  # offset 0: monotonic time of the child's last Python heartbeat
_SIGNAL = struct.Struct("i")  # offset 8: last signal the job's code sent its own process
_SIGNAL_OFFSET = 8
_GROUP = struct.Struct("q")  # offset 16: process group of the running fork-mode invocation
_GROUP_OFFSET = 16
_CHILD_SIGNAL_OFFSET = 24  # last signal a fork-mode invocation's code sent its own process

_KILL_EVENTS = frozenset({"os.kill", "os.killpg", "signal.pthread_kill"})


class Link:
    """The child's side: the shared send lock, its heartbeat, notes for the supervisor."""

    def __init__(self, lock: Any, shared: mmap.mmap, supervisor_pid: int) -> None:
        self.lock = lock
        self.shared = shared
        self.supervisor_pid = supervisor_pid

    def beat(self) -> None:
        _BEAT.pack_into(self.shared, 0, time.monotonic())

    def supervisor_alive(self) -> bool:
        return os.getppid() == self.supervisor_pid

    def child_signal(self, reset: bool = False) -> Optional[int]:
        """The last signal a fork-mode invocation sent its own process (its group), if any;
        ``reset``: forget it (before the next invocation)."""
        value = _SIGNAL.unpack_from(self.shared, _CHILD_SIGNAL_OFFSET)[0]
        if reset:
            _SIGNAL.pack_into(self.shared, _CHILD_SIGNAL_OFFSET, 0)
        return value or None

    def set_invocation_group(self, pgid: int) -> None:
        """The process group of the child running the current invocation (fork mode), 0 when
        none: it is killed with the worker when the worker is lost."""
        _GROUP.pack_into(self.shared, _GROUP_OFFSET, pgid)

    def watch_own_signals(self) -> None:
        """Note (before it is sent) every signal the job's code sends to this process or its
        group, so that the supervisor can tell a self-inflicted end from a kill."""
        shared = self.shared
        owner = os.getpid()

        def hook(event: str, args: tuple[Any, ...]) -> None:
            if event not in _KILL_EVENTS:
                return
            target, sig = args
            if not sig:
                return
            mine = (
                event == "signal.pthread_kill"
                or (event == "os.kill" and target in (0, os.getpid(), -os.getpgrp()))
                or (event == "os.killpg" and target in (0, os.getpgrp()))
            )
            if mine:  # a fork-mode invocation's child notes its own, for the worker
                offset = _SIGNAL_OFFSET if os.getpid() == owner else _CHILD_SIGNAL_OFFSET
                _SIGNAL.pack_into(shared, offset, int(sig))

        sys.addaudithook(hook)


def start(conn: Connection) -> Link:
    """Fork the worker: return a :class:`Link` in the child; the parent supervises the child
    and exits when it ends (this function never returns there)."""
    if os.getpgrp() != os.getpid():
        try:
            os.setpgid(0, 0)  # a Slurm pilot: lead a group of our own, so kills stay in it
        except OSError:
            pass
    lock = multiprocessing.get_context("fork").Lock()
    shared = mmap.mmap(-1, 32)
    manager_parent = os.getppid()
    supervisor_pid = os.getpid()
    child = os.fork()
    if child == 0:
        _die_with_parent()
        if os.getppid() != supervisor_pid:
            os._exit(71)
        link = Link(lock, shared, supervisor_pid)
        link.watch_own_signals()
        return link
    Supervisor(child, conn, lock, shared, manager_parent).run()


class Supervisor:
    def __init__(
        self, child: int, conn: Connection, lock: Any, shared: mmap.mmap, manager_parent: int
    ) -> None:
        self.child = child
        self.conn = conn
        self.lock = lock
        self.shared = shared
        self.manager_parent = manager_parent
        self.samples: deque[ProcSample] = deque(maxlen=32)
        self.sampled = child
        self.terminated_by: Optional[int] = None
        self.oom_before = _oom_kills()
        self.reaped_status: Optional[int] = None

    def run(self) -> NoReturn:
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2):
            signal.signal(sig, self._on_signal)
        try:
            pidfd: Optional[int] = os.pidfd_open(self.child)
        except (AttributeError, OSError):
            pidfd = None
        next_beat = time.monotonic() + HEARTBEAT_INTERVAL
        while True:
            if pidfd is not None:
                select.select([pidfd], [], [], 0.2)
            else:
                time.sleep(0.1)
            if self.terminated_by is not None:
                self._kill_invocation()
                _kill_group_except_self()
            if self._child_exited():
                self._child_ended()
            if os.getppid() != self.manager_parent:
                self._kill_invocation()
                _kill_whole_group()  # the manager (our parent) is gone
            now = time.monotonic()
            if now >= next_beat:
                next_beat = now + HEARTBEAT_INTERVAL
                self._beat(now)

    def _on_signal(self, signum: int, frame: Any) -> None:
        if _SIGNAL.unpack_from(self.shared, _SIGNAL_OFFSET)[0] == signum:
            return  # the job's code signalled its whole group: its own fate decides
        self.terminated_by = signum

    def _beat(self, now: float) -> None:
        # Judge the process running the invocation: a fork-mode child while one runs.
        target = _GROUP.unpack_from(self.shared, _GROUP_OFFSET)[0] or self.child
        if target != self.sampled:
            self.samples.clear()
            self.sampled = target
        sample = _sample(target, now)
        if sample is not None:
            self.samples.append(sample)
        beat_at = _BEAT.unpack_from(self.shared, 0)[0]
        if beat_at == 0.0:
            return  # the child has not said Hello yet: the handshake comes first
        note = why_not_alive(judge(now, beat_at, list(self.samples)))
        if not self.lock.acquire(timeout=1.0):
            return  # the child is sending a large message; beat next time
        try:
            self.conn.send(Heartbeat(note=note))
        except (OSError, ValueError):
            _kill_whole_group()  # the manager is gone
        finally:
            self.lock.release()

    def _child_exited(self) -> bool:
        if hasattr(os, "waitid"):  # Linux: look without reaping
            return os.waitid(os.P_PID, self.child, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
        pid, status = os.waitpid(self.child, os.WNOHANG)  # macOS: no waitid
        if pid:
            self.reaped_status = status
        return bool(pid)

    def _exit_code(self) -> int:
        """How the ended child ended, as ``os.waitstatus_to_exitcode`` says it (negative: a
        signal), without reaping it."""
        if self.reaped_status is not None:
            return os.waitstatus_to_exitcode(self.reaped_status)
        info = os.waitid(os.P_PID, self.child, os.WEXITED | os.WNOWAIT)
        if info is None:  # not possible once _child_exited said so; reap to find out
            _, status = os.waitpid(self.child, 0)
            self.reaped_status = status
            return os.waitstatus_to_exitcode(status)
        if info.si_code == os.CLD_EXITED:
            return info.si_status
        return -info.si_status

    def _kill_invocation(self) -> None:
        pgid = _GROUP.unpack_from(self.shared, _GROUP_OFFSET)[0]
        if pgid > 0:
            try:
                os.killpg(pgid, signal.SIGKILL)
            except OSError:
                pass

    def _child_ended(self) -> NoReturn:
        # The child is a zombie (not reaped: its pid and group stay reserved). When it was
        # lost (killed from outside), every process of its group and of its running
        # invocation's is killed before the manager may requeue that invocation. When it
        # ended by its job's own code, or stopped as asked, nothing is killed: what its jobs
        # started in the background lives on, as under --executor local.
        code = self._exit_code()
        exit_status, signal_number = (code, None) if code >= 0 else (None, -code)
        cause = classify_exit(
            exit_status=exit_status,
            signal_number=signal_number,
            self_signal=_SIGNAL.unpack_from(self.shared, _SIGNAL_OFFSET)[0] or None,
            oom_killed=_oom_kills() > self.oom_before,
            terminated_by=self.terminated_by,
        )
        if cause.fate is Fate.REQUEUE:
            self._kill_invocation()
            _kill_group_except_self()
        if self.reaped_status is None:
            os.waitpid(self.child, 0)
        # A child killed mid-send holds the lock and left half a message: say nothing more
        # on that stream (the manager sees it close and counts the worker as lost).
        if self.lock.acquire(timeout=0.5):
            try:
                self.conn.send(WorkerExited(cause.fate, cause.cause, exit_status, signal_number))
            except (OSError, ValueError):
                pass
        os._exit(code if code >= 0 else 128 - code)


def _on_linux() -> bool:
    return Path("/proc/self/stat").exists()


def _sample(pid: int, now: float) -> Optional[ProcSample]:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return parse_proc_stat(text, now, os.sysconf("SC_CLK_TCK"))


def _kill_group_except_self() -> None:
    """SIGKILL every live process of this process group but this one (Linux: from /proc;
    elsewhere the manager kills the group once this process has exited)."""
    if not _on_linux():
        return
    me, group = os.getpid(), os.getpgrp()
    for _ in range(100):
        others = []
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit() or int(entry.name) == me:
                continue
            sample = _sample(int(entry.name), 0.0)
            if sample is not None and sample.pgrp == group and sample.state not in ("Z", "X"):
                others.append(int(entry.name))
        if not others:
            return
        for pid in others:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.01)


def _kill_whole_group() -> NoReturn:
    os.killpg(0, signal.SIGKILL)
    os._exit(70)  # not reached


def die_with_parent_call() -> Optional[Callable[[], Any]]:
    """Linux: a call that has the kernel SIGKILL the calling process when its parent dies
    (``prctl(PR_SET_PDEATHSIG, SIGKILL)``), libc looked up now; None elsewhere. The worker
    prepares it once for all its forked children (a child that looked libc up itself would
    spend 0.4 ms and copy dozens of the template's pages)."""
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    pr_set_pdeathsig = 1
    return functools.partial(prctl, pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0)


def _die_with_parent() -> None:
    """Have the kernel SIGKILL this process when its parent (the supervisor) dies."""
    call = die_with_parent_call()
    if call is not None:
        call()


def _oom_kills() -> int:
    """OOM kills so far in this process's memory cgroup (v2 ``memory.events`` or v1
    ``memory.oom_control``); 0 when unknown."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return 0
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            candidate = Path("/sys/fs/cgroup") / path.lstrip("/") / "memory.events"
        elif "memory" in controllers.split(","):
            candidate = Path("/sys/fs/cgroup/memory") / path.lstrip("/") / "memory.oom_control"
        else:
            continue
        try:
            for row in candidate.read_text().splitlines():
                key, _, value = row.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            continue
    return 0
