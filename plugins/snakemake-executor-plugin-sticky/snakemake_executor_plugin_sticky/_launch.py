"""Starting workers: as local processes (the default) or as Slurm pilot jobs.

A launcher starts a worker and returns a handle; the manager only ever asks a handle whether
the worker has ended (and why), waits for it, or kills it. The worker command is the same
everywhere: ``python -m snakemake_executor_plugin_sticky.worker``, with the same interpreter.
"""

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Optional

from . import slurm
from ._liveness import signal_name
from ._pilot_env import pilot_environment
from ._slurm_health import SlurmWatch

log = logging.getLogger("snakemake.sticky")


class LaunchError(Exception):
    """A worker could not be started at all (e.g. sbatch refused the pilot)."""


def worker_command(worker_id: str) -> list[str]:
    """The command of every worker: no address, no secret (see :func:`connection_info`)."""
    return [
        sys.executable,
        "-m",
        "snakemake_executor_plugin_sticky.worker",
        "--worker-id",
        worker_id,
    ]


def connection_info(connect: str, secret: bytes) -> str:
    """What a worker needs to reach its manager: given on stdin or in a 0600 file, never on a
    command line."""
    return json.dumps({"connect": connect, "secret": secret.hex()})


class WorkerHandle(ABC):
    description: str

    @abstractmethod
    def ended(self) -> Optional[str]:
        """Why the worker has ended, or None while it runs (or waits to run)."""

    def pending_reason(self) -> str:
        """What the worker is waiting for before it can start, if anything."""
        return ""

    @abstractmethod
    def kill(self) -> None: ...

    def release(self) -> None:  # noqa: B027 (optional hook)
        """After the worker ended: end whatever its jobs left running (a Slurm job's
        processes end with the job)."""

    def wait(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.ended() is not None:
                return True
            time.sleep(0.1)
        return self.ended() is not None


class Launcher(ABC):
    @abstractmethod
    def start(
        self, worker_id: str, connect: str, resources: dict[str, Any], env: dict[str, str]
    ) -> WorkerHandle: ...

    def refresh(self, force: bool = False) -> None:  # noqa: B027 (optional hook)
        """Bring the launcher's view of its workers up to date (called periodically)."""

    def close(self) -> None:  # noqa: B027 (optional hook)
        """End of run: make sure nothing this launcher started is left."""


# ---- local processes -----------------------------------------------------------------------


class LocalHandle(WorkerHandle):
    def __init__(self, process: "subprocess.Popen[bytes]") -> None:
        self.process = process
        self.description = f"pid {process.pid}"

    def ended(self) -> Optional[str]:
        code = self.process.poll()
        if code is None:
            return None
        if code < 0:
            return f"the worker process was killed by {signal_name(-code)}"
        return f"the worker process exited with status {code}"

    def kill(self) -> None:
        """Kill the worker's whole process group (it runs in its own session): the worker,
        its supervisor, and every process its jobs started, even after the worker itself
        has exited (the group outlives its leader while any member lives)."""
        self.release()
        if self.process.poll() is None:
            self.process.wait(timeout=10)

    def release(self) -> None:
        """Kill the worker's session: its process group, and the group of each fork-mode
        invocation (a child leads a group of its own, in the worker's session)."""
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for pid in session_members(self.process.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


def session_members(session: int) -> list[int]:
    """Live processes of a session (Linux ``/proc``; empty elsewhere)."""
    found: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return found
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                text = f.read()
        except OSError:
            continue
        fields = text[text.rindex(")") + 2 :].split()  # state ppid pgrp session ...
        if fields[0] not in ("Z", "X") and int(fields[3]) == session:
            found.append(int(entry))
    return found


class LocalLauncher(Launcher):
    def __init__(self, run_dir: Path, workdir: Path, secret: bytes) -> None:
        self.run_dir, self.workdir, self.secret = run_dir, workdir, secret

    def start(
        self, worker_id: str, connect: str, resources: dict[str, Any], env: dict[str, str]
    ) -> WorkerHandle:
        log_path = self.run_dir / f"worker-{worker_id}.log"
        # Address and secret go through a pipe: never on a command line, never in a file. Not
        # through stdin, which is Snakemake's own, as a local script job's stdin is.
        read_end, write_end = os.pipe()
        try:
            with open(log_path, "ab") as out:
                process = subprocess.Popen(
                    worker_command(worker_id),
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    cwd=self.workdir,
                    env={**env, "STICKY_CONNECTION_FD": str(read_end)},
                    start_new_session=True,
                    pass_fds=(read_end,),
                )
            os.close(read_end)
            read_end = -1
            os.write(write_end, connection_info(connect, self.secret).encode() + b"\n")
        finally:
            for fd in (read_end, write_end):
                if fd >= 0:
                    os.close(fd)
        return LocalHandle(process)


# ---- Slurm pilots --------------------------------------------------------------------------


class SlurmHandle(WorkerHandle):
    def __init__(self, launcher: "SlurmLauncher", job_id: str, options: list[str]) -> None:
        self.launcher = launcher
        self.job_id = job_id
        self.options = options
        self.description = f"Slurm job {job_id} ({' '.join(options) or 'default sbatch options'})"
        self._killed = False

    def _state(self) -> tuple[str, str]:
        return self.launcher.states.get(self.job_id, ("", ""))

    def ended(self) -> Optional[str]:
        if self._killed:
            return "cancelled by the manager"
        state, reason = self._state()
        if not state and self.job_id not in self.launcher.seen:
            return None  # submitted, not yet listed by squeue
        if slurm.pilot_state(state) is slurm.PilotState.ENDED:
            return f"its Slurm job {self.job_id} ended: {state or 'gone'} {reason}".rstrip()
        return None

    def pending_reason(self) -> str:
        state, reason = self._state()
        return f"{state} ({reason})" if state else "not yet listed by squeue"

    def kill(self) -> None:
        if not self._killed:
            self._killed = True
            try:
                slurm.cancel([self.job_id])
            except slurm.SlurmError:
                pass

    def wait(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.launcher.refresh(force=True)
            state, _ = self._state()
            if slurm.pilot_state(state) is slurm.PilotState.ENDED and state != "COMPLETING":
                return True
            time.sleep(0.2)
        return False


class SlurmLauncher(Launcher):
    """Workers as Slurm pilot jobs, all named ``sticky-<run id>`` so one query sees them all.

    The manager's address and the run secret reach pilots in a file readable by the submitting
    user only (0600 in the run's folder); its path is passed in the job's environment, which is
    the documented pilot environment (:mod:`._pilot_env`), plus ``env_names``.

    Pilot states come from ``squeue``; a pilot that leaves squeue's view is looked up with
    ``scontrol`` before it counts as gone. Neither needs Slurm's accounting database: when
    ``sacct`` stops answering, pilots keep running and the user is told once (:class:`SlurmWatch`).
    """

    REFRESH_SECONDS = 1.0
    """At most one squeue per second, however often the manager asks."""

    def __init__(
        self,
        run_dir: Path,
        workdir: Path,
        secret: bytes,
        run_id: str,
        env_names: Iterable[str] = (),
        watch: Optional[SlurmWatch] = None,
    ) -> None:
        self.run_dir, self.workdir = run_dir, workdir
        self.job_name = f"sticky-{run_id}"
        self.secret = secret
        self.connection_file = run_dir / "connection"
        self.env_names = tuple(env_names)
        self.states: dict[str, tuple[str, str]] = {}
        self.seen: set[str] = set()
        self._last_refresh = 0.0
        self.watch = watch or SlurmWatch()  # the run's, shared with its hybrid Slurm jobs

    def start(
        self, worker_id: str, connect: str, resources: dict[str, Any], env: dict[str, str]
    ) -> WorkerHandle:
        if not self.connection_file.exists():
            fd = os.open(self.connection_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(connection_info(connect, self.secret))
        pilot_env = pilot_environment(
            {**env, "STICKY_CONNECTION_FILE": str(self.connection_file)}, self.env_names
        )
        try:
            options = slurm.sbatch_options(resources)
            job_id = slurm.submit(
                job_name=self.job_name,
                output=str(self.run_dir / f"pilot-{worker_id}-%j.log"),
                workdir=str(self.workdir),
                options=options,
                command=worker_command(worker_id),
                env=pilot_env.submit_env,
                export=pilot_env.export_option(),
            )
        except (ValueError, slurm.SlurmError) as e:
            raise LaunchError(str(e)) from None
        return SlurmHandle(self, job_id, options)

    def refresh(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last_refresh < self.REFRESH_SECONDS:
            return
        self._last_refresh = now
        self._probe_accounting(now)
        try:
            states = slurm.job_states(self.job_name)
        except slurm.SlurmError as e:
            # Keep the last view; a flaky squeue must not lose every pilot.
            self._tell(self.watch.squeue_failed(now, str(e)))
            return
        self._tell(self.watch.squeue_answered(), warning=False)
        for job_id in self.seen - set(states):
            old = self.states.get(job_id)
            if old is None or slurm.pilot_state(old[0]) is slurm.PilotState.ENDED:
                continue
            # Left squeue's view while running or pending: ask slurmctld directly once.
            try:
                found = slurm.scontrol_state(job_id)
            except slurm.SlurmError:
                found = old  # unknown for now: as last seen, asked again next time
            if found is not None:
                states[job_id] = found
        self.states = states
        self.seen.update(states)

    def _probe_accounting(self, now: float) -> None:
        """Every ``watch.accounting_every`` seconds, ask sacct in the background whether
        accounting answers (never blocking the manager)."""
        with self.watch.lock:
            if not self.watch.probe_due(now):
                return
        probe_id = next(iter(self.seen), "1")

        def probe() -> None:
            error = slurm.accounting_error(probe_id)
            with self.watch.lock:
                message = self.watch.probe_result(time.monotonic(), error)
            self._tell(message, warning=error is not None)

        threading.Thread(target=probe, name="sticky-sacct-probe", daemon=True).start()

    @staticmethod
    def _tell(message: Optional[str], warning: bool = True) -> None:
        if message:
            (log.warning if warning else log.info)(message)

    def close(self) -> None:
        try:
            slurm.cancel_by_name(self.job_name)
        except slurm.SlurmError:
            pass
        self.connection_file.unlink(missing_ok=True)
