"""The sticky manager: listens for workers, starts them, routes invocations, detects losses.

It lives in the Snakemake process. One thread accepts and authenticates connections, one I/O
thread reads every worker's messages (``multiprocessing.connection.wait``) and runs the
periodic checks (process exits, heartbeats, idle workers). Routing decisions come from the
pure :class:`~._scheduling.StickyScheduler`; this module only carries them out.

Callbacks into the executor (job success or failure) are always made *after* the manager's
lock is released: they take Snakemake's scheduler lock, and the scheduler thread calls
:meth:`Manager.submit` while holding it.
"""

import dataclasses
import itertools
import logging
import os
import secrets
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing import AuthenticationError, Pipe
from multiprocessing.connection import Connection, answer_challenge, deliver_challenge, wait
from pathlib import Path
from typing import Any, Optional

from . import _scheduling as sched
from ._launch import Launcher, LaunchError, LocalLauncher, SlurmLauncher, WorkerHandle
from ._liveness import Fate
from ._metrics import MetricsLog
from ._protocol import (
    PROTOCOL_VERSION,
    Heartbeat,
    Hello,
    InvocationDone,
    Invoke,
    Refused,
    StateBuilt,
    StateFailed,
    Stop,
    TornDown,
    TraceStamp,
    WorkerExited,
    job_name,
    message_trace,
)
from ._slurm_health import SlurmWatch
from ._worker_env import worker_environment

HANDSHAKE_TIMEOUT = 10.0
"""Seconds a new connection has, in total, to authenticate and say Hello before it is cut off
(however slowly it trickles bytes in)."""

MAX_PENDING_HANDSHAKES = 16
"""Connections authenticated at once; further ones wait in the listen backlog until one of
these finishes or is cut off, so a flood of silent peers holds at most this many threads."""

RETIRED_EXIT_WAIT_S = 30.0
"""Seconds a retired worker's replacement waits at most for its process to end (its template's
teardown and exit handlers; a pilot's Slurm job)."""

log = logging.getLogger("snakemake.sticky")

DoneCallback = Callable[[int, bool, Optional[str], Optional[InvocationDone]], None]


@dataclass
class WorkerProcess:
    """What the manager knows of one worker process."""

    id: str
    handle: Optional[WorkerHandle]
    log_path: Path
    started_at: float
    conn: Optional[Connection] = None
    pid: Optional[int] = None
    host: Optional[str] = None
    last_seen: float = 0.0
    unwell: Optional[str] = None
    """Why its supervisor says the process is not alive, while it says so."""
    send_lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass
class InFlight:
    invoke: Invoke
    submitted_at: float
    dispatched_at: Optional[float] = None
    worker_id: Optional[str] = None


class Manager:
    """Starts and feeds sticky workers for one Snakemake run."""

    def __init__(
        self,
        *,
        max_workers: int,
        max_per_template: Optional[dict[str, int]] = None,
        run_dir: Path,
        workdir: Path,
        on_done: DoneCallback,
        on_requeue: Callable[[int], None],
        metrics: MetricsLog,
        listen_host: str = "127.0.0.1",
        listen_port: int = 0,
        idle_timeout: float = 300.0,
        heartbeat_timeout: float = 20.0,
        start_timeout: float = 120.0,
        max_requeues: int = 3,
        backend: str = "local",
        run_id: str = "run",
        pilot_env_names: tuple[str, ...] = (),
        slurm_watch: Optional[SlurmWatch] = None,
    ) -> None:
        self.run_dir = run_dir
        self.workdir = workdir
        self.on_done = on_done
        self.on_requeue = on_requeue
        self.on_worker_writes: Optional[Callable[[list[str]], None]] = None
        """Told the files a template build wrote (--sticky-checkpoints: not blamed on a
        non-sticky job running meanwhile)."""
        self.metrics = metrics
        self.heartbeat_timeout = heartbeat_timeout
        self.start_timeout = start_timeout
        self.secret = secrets.token_bytes(32)
        self.launcher: Launcher
        self.backend = backend
        if backend == "slurm":
            self.launcher = SlurmLauncher(
                run_dir,
                workdir,
                self.secret,
                run_id,
                env_names=pilot_env_names,
                watch=slurm_watch,
            )
        elif backend == "local":
            self.launcher = LocalLauncher(run_dir, workdir, self.secret)
        else:
            raise ValueError(f"unknown sticky backend {backend!r}: use local or slurm")
        # Worker class -> the resources a worker of that class is started with.
        self._class_resources: dict[str, dict[str, Any]] = {"": {}}
        self.scheduler = sched.StickyScheduler(
            max_workers=max_workers,
            max_per_template=max_per_template,
            idle_timeout=idle_timeout,
            max_requeues=max_requeues,
        )
        self.workers: dict[str, WorkerProcess] = {}
        self._retiring: dict[str, tuple[WorkerHandle, float]] = {}
        """Stopped workers still exiting, by id: their handle and when they were stopped."""
        self._direct_noted: set[str] = set()
        self.inflight: dict[int, InFlight] = {}
        self._told_failures: set[tuple[str, str]] = set()
        """(template, traceback) of the build failures already logged."""
        self.worker_env: dict[str, str] = {}
        self._lock = threading.RLock()
        self._pending_callbacks: list[Callable[[], None]] = []
        self._closed = threading.Event()
        self._wake_r, self._wake_w = Pipe(duplex=False)
        family = socket.AF_INET6 if ":" in listen_host else socket.AF_INET
        self._server = socket.create_server((listen_host, listen_port), family=family)
        self.address = self._server.getsockname()[:2]
        self._trace = message_trace("sticky-manager")
        self._trace_ids = itertools.count(1)
        self._handshake_slots = threading.BoundedSemaphore(MAX_PENDING_HANDSHAKES)
        self._pending_lock = threading.Lock()
        # handshake id -> (deadline, a duplicate of its socket, shut down at the deadline)
        self._pending: dict[int, tuple[float, socket.socket]] = {}
        self._pending_ids = itertools.count(1)
        self._accept_thread = threading.Thread(
            target=self._accept_loop, name="sticky-accept", daemon=True
        )
        self._io_thread = threading.Thread(target=self._io_loop, name="sticky-io", daemon=True)
        self._accept_thread.start()
        self._io_thread.start()
        log.debug("sticky manager listening on %s:%s", *self.address)

    # ---- API used by the executor ----------------------------------------------------------

    def submit(self, invoke: Invoke, pilot_resources: Optional[dict[str, Any]] = None) -> None:
        """Queue an invocation. ``pilot_resources`` describe the worker it needs (default: the
        cluster's defaults); workers are interchangeable only if started with the same
        resources. Local workers are all of one class."""
        now = time.monotonic()
        cls = ""
        if self.backend != "local":
            pilot_resources = pilot_resources or {}
            cls = repr(sorted(pilot_resources.items()))
        with self._lock:
            self._class_resources.setdefault(cls, dict(pilot_resources or {}))
            self.inflight[invoke.invocation_id] = InFlight(invoke, now)
            self._apply(self.scheduler.submit(invoke.invocation_id, invoke.template, now, cls))
        self._run_callbacks()

    def shutdown(self, grace: float = 30.0) -> None:
        """End of run: ask every worker to tear down and exit; kill what does not."""
        if self._closed.is_set():
            return
        with self._lock:
            self._apply(self.scheduler.stop_all("end of run"))
        self._reap(grace)
        self._close()

    def cancel(self) -> None:
        """Ctrl-C or error: kill busy workers (and all their processes) at once, let idle ones
        tear down, leave no process behind. No worker is "lost", nothing is requeued."""
        if self._closed.is_set():
            return
        with self._lock:
            instructions = self.scheduler.cancel_all("run cancelled")
            self.inflight.clear()
            busy = sum(1 for i in instructions if isinstance(i, sched.StopWorker) and i.kill)
            if instructions:
                log.info(
                    "sticky: run cancelled: stopping %d worker(s), %d of them killed mid-job",
                    len(instructions),
                    busy,
                )
            self._apply(instructions)
        self._reap(3.0)
        self._close()

    @property
    def connect_address(self) -> str:
        host, port = self.address
        if host in ("0.0.0.0", "::"):
            host = socket.gethostname()
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

    # ---- connections ------------------------------------------------------------------------

    def _accept_loop(self) -> None:
        """Accept connections while a handshake slot is free; cut off overdue handshakes."""
        self._server.settimeout(0.25)
        while not self._closed.is_set():
            self._cut_overdue_handshakes(time.monotonic())
            if not self._handshake_slots.acquire(timeout=0.25):
                continue
            try:
                sock, addr = self._server.accept()
            except TimeoutError:
                self._handshake_slots.release()
                continue
            except OSError:
                self._handshake_slots.release()
                return
            sock.setblocking(True)
            key = next(self._pending_ids)
            with self._pending_lock:
                deadline = time.monotonic() + HANDSHAKE_TIMEOUT
                self._pending[key] = (deadline, sock.dup())
            threading.Thread(
                target=self._handshake_in_slot,
                args=(key, sock, addr),
                name="sticky-handshake",
                daemon=True,
            ).start()

    def _cut_overdue_handshakes(self, now: float) -> None:
        """Shut down connections still authenticating past their total deadline: their
        handshake thread's read returns at once and the thread ends."""
        with self._pending_lock:
            for deadline, dup in self._pending.values():
                if now >= deadline:
                    try:
                        dup.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass

    def _handshake_in_slot(self, key: int, sock: socket.socket, addr: Any) -> None:
        try:
            self._handshake(sock, addr, key)
        finally:
            self._end_pending(key)
            self._handshake_slots.release()

    def _end_pending(self, key: int) -> bool:
        """Unregister a handshake from the deadline sweep; False if its deadline had passed."""
        with self._pending_lock:
            entry = self._pending.pop(key, None)
        if entry is None:
            return True
        entry[1].close()
        return time.monotonic() < entry[0]

    def _handshake(self, sock: socket.socket, addr: Any, key: int = 0) -> None:
        """Authenticate a new connection with the run secret, then register its worker."""
        peer = f"{addr[0]}:{addr[1]}"
        _set_recv_timeout(sock, HANDSHAKE_TIMEOUT)
        conn = Connection(sock.detach())
        try:
            deliver_challenge(conn, self.secret)
            answer_challenge(conn, self.secret)
            hello = conn.recv()
        except AuthenticationError:
            log.warning(
                "sticky: refused a connection from %s: it did not prove the run secret", peer
            )
            self.metrics.write("connection_refused", peer=peer)
            conn.close()
            return
        except (OSError, EOFError) as e:
            why = e if self._end_pending(key) else f"over the {HANDSHAKE_TIMEOUT:g} s deadline"
            log.warning(
                "sticky: dropped a connection from %s during authentication (%s)", peer, why
            )
            conn.close()
            return
        if not self._end_pending(key):
            log.warning("sticky: dropped a connection from %s: handshake over the deadline", peer)
            conn.close()
            return
        _set_recv_timeout_fd(conn.fileno(), 0.0)
        if not isinstance(hello, Hello) or hello.protocol_version != PROTOCOL_VERSION:
            got = getattr(hello, "protocol_version", type(hello).__name__)
            reason = f"protocol version {got}, manager speaks {PROTOCOL_VERSION}"
            log.error(
                "sticky: refused worker at %s: %s; install the same version everywhere",
                peer,
                reason,
            )
            _send_quietly(conn, Refused(reason))
            conn.close()
            return
        with self._lock:
            worker = self.workers.get(hello.worker_id)
            if worker is None or worker.conn is not None:
                _send_quietly(conn, Refused(f"unknown worker id {hello.worker_id!r}"))
                conn.close()
                return
            worker.conn, worker.pid, worker.host = conn, hello.pid, hello.host
            worker.last_seen = time.monotonic()
            self.metrics.write(
                "worker_connected",
                worker=worker.id,
                pid=hello.pid,
                host=hello.host,
                seconds_to_connect=worker.last_seen - worker.started_at,
            )
            self._apply(self.scheduler.worker_connected(worker.id, worker.last_seen))
        self._wake()
        self._run_callbacks()

    def _wake(self) -> None:
        try:
            self._wake_w.send_bytes(b"")
        except OSError:
            pass

    # ---- the I/O thread ---------------------------------------------------------------------

    def _io_loop(self) -> None:
        """Read worker messages and run the periodic checks until the manager closes.

        An unexpected error is logged and the loop goes on: if this thread died, every
        running invocation would wait forever."""
        last_tick = 0.0
        while not self._closed.is_set():
            try:
                self._read_messages(timeout=0.25)
                now = time.monotonic()
                if now - last_tick >= 0.25:
                    last_tick = now
                    self._periodic(now)
                self._run_callbacks()
            except Exception:
                log.exception("sticky: error in the manager's I/O thread (continuing)")
                time.sleep(0.1)

    def _read_messages(self, timeout: float) -> None:
        with self._lock:
            conns = {w.conn: w for w in self.workers.values() if w.conn is not None}
        try:
            ready: list[Any] = wait([*conns, self._wake_r], timeout=timeout)
        except OSError:
            return
        for conn in ready:
            if conn is self._wake_r:
                while self._wake_r.poll():
                    self._wake_r.recv_bytes()
                continue
            worker = conns[conn]
            try:
                message = conn.recv()
            except (EOFError, OSError):
                self._lose(worker.id, "its connection closed (the worker process died)")
                continue
            self._handle(worker, message)

    def _handle(self, worker: WorkerProcess, message: object) -> None:
        now = time.monotonic()
        with self._lock:
            if isinstance(message, Heartbeat):
                # A beat with a note: the process exists but is stopped or hung; not a beat.
                worker.unwell = message.note
                if message.note is None:
                    worker.last_seen = now
                return
            worker.last_seen = now
            if isinstance(message, WorkerExited):
                self._lose(worker.id, message.cause, message.fate)
            elif isinstance(message, TornDown):
                if message.writes and self.on_worker_writes is not None:
                    self.on_worker_writes(list(message.writes))
            elif isinstance(message, StateBuilt):
                self.scheduler.state_built(worker.id, message.template)
                if message.writes and self.on_worker_writes is not None:
                    self.on_worker_writes(list(message.writes))
                if message.direct_because and message.template not in self._direct_noted:
                    self._direct_noted.add(message.template)
                    log.warning(
                        "sticky: template %r runs its invocations in direct mode on worker %s, "
                        "not forked: %s. Each job runs in the worker itself; a worker whose "
                        "process a job changes is retired and replaced.",
                        message.template,
                        worker.id,
                        message.direct_because,
                    )
                self.metrics.write(
                    "state_built",
                    worker=worker.id,
                    template=message.template,
                    seconds=message.seconds,
                    direct_because=message.direct_because,
                )
                log.info(
                    "sticky: worker %s built template %r in %.2f s",
                    worker.id,
                    message.template,
                    message.seconds,
                )
            elif isinstance(message, StateFailed):
                # Once per run and traceback: workers that build at once fail at once, before
                # the scheduler has recorded the first failure.
                told = (message.template, message.traceback)
                if message.template not in self.scheduler.failed_templates and (
                    told not in self._told_failures
                ):
                    self._told_failures.add(told)
                    log.error(
                        "sticky template %r failed to build on worker %s:\n%s",
                        message.template,
                        worker.id,
                        message.traceback,
                    )
                self.metrics.write("state_failed", worker=worker.id, template=message.template)
            elif isinstance(message, InvocationDone):
                if self._trace is not None and message.trace is not None:
                    self._trace.recv(message.trace.message_id, message.trace.clock, worker.id)
                self._finished(worker, message, now)

    def _finished(self, worker: WorkerProcess, done: InvocationDone, now: float) -> None:
        if done.lost is not None and done.invocation_id in self.inflight:
            if done.retire is not None:  # not run: its template was out of date
                log.warning("sticky: worker %s: %s", worker.id, done.lost)
                self.metrics.write("worker_retired", worker=worker.id, reason=done.retire)
            else:
                log.warning(
                    "sticky: an invocation's process on worker %s: %s", worker.id, done.lost
                )
            self.metrics.write(
                "invocation_lost", id=done.invocation_id, worker=worker.id, reason=done.lost
            )
            self._apply(
                self.scheduler.invocation_lost(
                    worker.id, done.invocation_id, now, done.lost, retire=done.retire
                )
            )
            return
        entry = self.inflight.pop(done.invocation_id, None)
        if entry is None:
            return
        self.metrics.write(
            "invocation",
            id=done.invocation_id,
            worker=worker.id,
            template=entry.invoke.template,
            rule=entry.invoke.snakemake.rule,
            ok=done.ok,
            queued_s=(entry.dispatched_at or now) - entry.submitted_at,
            latency_s=now - entry.submitted_at,
            exec_s=sum(done.seconds),
        )
        if done.retire is not None:
            self.metrics.write("worker_retired", worker=worker.id, reason=done.retire)
        instructions = self.scheduler.invocation_done(
            worker.id, done.invocation_id, now, retire=done.retire
        )
        if done.template_failed:
            reason = (
                f"sticky template {entry.invoke.template!r} failed to build "
                f"(its traceback is logged above, once)"
            )
            instructions += self.scheduler.template_failed(entry.invoke.template, reason, now)
            self._callback(done.invocation_id, False, reason, done)
        else:
            self._callback(done.invocation_id, done.ok, done.error, done)
        self._apply(instructions)

    def _periodic(self, now: float) -> None:
        self.launcher.refresh()
        with self._lock:
            for worker_id, (handle, since) in list(self._retiring.items()):
                if handle.ended() is not None:
                    handle.release()  # whatever the stopped worker's jobs left running
                    del self._retiring[worker_id]
                    self._apply(self.scheduler.worker_exited(worker_id, now))
                elif now - since > RETIRED_EXIT_WAIT_S:  # its replacement waited long enough
                    self._apply(self.scheduler.worker_exited(worker_id, now))
            for worker in list(self.workers.values()):
                ended = worker.handle.ended() if worker.handle is not None else None
                if ended is not None:
                    # Its supervisor's last words (how the process ended) come first.
                    self._drain(worker)
                    if worker.id in self.workers:
                        self._lose(worker.id, ended)
                elif worker.conn is None and now - worker.started_at > self.start_timeout:
                    waiting = worker.handle.pending_reason() if worker.handle else ""
                    where = worker.handle.description if worker.handle else "?"
                    self._lose(
                        worker.id,
                        f"it did not connect within {self.start_timeout:g} s "
                        f"({where}{'; ' + waiting if waiting else ''})",
                    )
                elif worker.conn is not None and now - worker.last_seen > self.heartbeat_timeout:
                    why = f" ({worker.unwell})" if worker.unwell else ""
                    self._lose(worker.id, f"no heartbeat for {self.heartbeat_timeout:g} s{why}")
            self._apply(self.scheduler.tick(now))

    def _drain(self, worker: WorkerProcess) -> None:
        """Handle the messages a worker sent before it ended (the caller holds the lock)."""
        while worker.id in self.workers and worker.conn is not None:
            try:
                if not worker.conn.poll(0):
                    return
                message = worker.conn.recv()
            except (EOFError, OSError, ValueError):
                return
            self._handle(worker, message)

    def _lose(self, worker_id: str, reason: str, fate: Fate = Fate.REQUEUE) -> None:
        """A worker ended. ``fate``: what its supervisor says becomes of its invocation (the
        job's code ended the process: it ends once; otherwise it is requeued)."""
        with self._lock:
            worker = self.workers.pop(worker_id, None)
            if worker is None:
                return
            stopping = self.scheduler.workers.get(worker_id)
            expected = stopping is not None and stopping.phase is sched.Phase.STOPPING
            if expected:
                # It was asked to stop and is exiting: let it finish (a pilot then ends
                # COMPLETED, not CANCELLED); _reap kills it if it does not.
                self.metrics.write("worker_stopped", worker=worker_id)
                if worker.conn is not None:
                    worker.conn.close()
                if worker.handle is not None:
                    self._retiring[worker_id] = (worker.handle, time.monotonic())
                else:
                    self._apply(self.scheduler.worker_exited(worker_id, time.monotonic()))
            elif fate is Fate.REQUEUE:
                log.warning(
                    "sticky: lost worker %s: %s (log: %s)", worker_id, reason, worker.log_path
                )
                self.metrics.write("worker_lost", worker=worker_id, reason=reason)
                _kill(worker)
            else:
                log.warning(
                    "sticky: worker %s ended: %s (log: %s)", worker_id, reason, worker.log_path
                )
                self.metrics.write("worker_ended", worker=worker_id, reason=reason, fate=fate.value)
                _kill(worker)
            self._apply(self.scheduler.worker_lost(worker_id, time.monotonic(), reason, fate))

    # ---- carrying out instructions ----------------------------------------------------------

    def _apply(self, instructions: list[sched.Instruction]) -> None:
        """Carry out scheduler instructions; the caller holds the lock."""
        for ins in instructions:
            if isinstance(ins, sched.StartWorker):
                self._start_worker(ins.worker_id, ins.template, ins.cls)
            elif isinstance(ins, sched.Dispatch):
                entry = self.inflight[ins.invocation_id]
                entry.dispatched_at, entry.worker_id = time.monotonic(), ins.worker_id
                slot = self.scheduler.workers.get(ins.worker_id)
                if slot is not None and entry.invoke.template not in slot.templates:
                    # Progress lines (_progress.py) name the template being built.
                    self.metrics.write(
                        "state_building", worker=ins.worker_id, template=entry.invoke.template
                    )
                self._send(ins.worker_id, entry.invoke)
            elif isinstance(ins, sched.Requeue):
                log.warning(
                    "sticky: invocation of rule %s requeued after losing worker %s",
                    self.inflight[ins.invocation_id].invoke.snakemake.rule,
                    ins.worker_id,
                )
                self.metrics.write("requeued", id=ins.invocation_id, worker=ins.worker_id)
                # Partial outputs go before the invocation can run anywhere else.
                self.on_requeue(ins.invocation_id)
            elif isinstance(ins, sched.FailInvocation):
                self._record_ended(ins.invocation_id, ok=False)
                self._callback(ins.invocation_id, False, ins.reason, None)
            elif isinstance(ins, sched.FinishInvocation):
                self._record_ended(ins.invocation_id, ok=True)
                self._callback(ins.invocation_id, True, None, None)
            elif isinstance(ins, sched.StopWorker):
                self.metrics.write("worker_stop", worker=ins.worker_id, reason=ins.reason)
                worker = self.workers.get(ins.worker_id)
                if worker is not None and ins.kill:
                    _kill(worker)
                elif worker is not None and worker.conn is not None:
                    self._send(ins.worker_id, Stop())
                elif worker is not None:
                    _kill(worker)

    def _record_ended(self, invocation_id: int, ok: bool) -> None:
        """An invocation that ended without an InvocationDone: if it ran on a worker, it is
        one of the run's invocations (and failures) in the metrics."""
        entry = self.inflight.pop(invocation_id, None)
        if entry is None or entry.worker_id is None:
            return
        now = time.monotonic()
        self.metrics.write(
            "invocation",
            id=invocation_id,
            worker=entry.worker_id,
            template=entry.invoke.template,
            rule=entry.invoke.snakemake.rule,
            ok=ok,
            queued_s=(entry.dispatched_at or now) - entry.submitted_at,
            latency_s=now - entry.submitted_at,
            exec_s=now - (entry.dispatched_at or now),
        )

    def _send(self, worker_id: str, message: object) -> None:
        worker = self.workers[worker_id]
        assert worker.conn is not None
        if self._trace is not None and isinstance(message, Invoke):
            message_id = f"{self._trace.name}:{next(self._trace_ids)}"
            job = job_name(message.snakemake)
            clock = self._trace.send(message_id, worker_id, job=job)
            message = dataclasses.replace(message, trace=TraceStamp(message_id, clock))
        try:
            with worker.send_lock:
                worker.conn.send(message)
        except (OSError, ValueError) as e:
            # The I/O thread sees the broken connection and requeues; nothing is lost here.
            log.debug("sticky: sending to worker %s failed: %s", worker_id, e)

    def _start_worker(self, worker_id: str, template: str, cls: str) -> None:
        env = worker_environment(os.environ, self.worker_env)
        now = time.monotonic()
        worker = WorkerProcess(
            worker_id, None, self.run_dir / f"worker-{worker_id}.log", now, last_seen=now
        )
        self.workers[worker_id] = worker
        resources = self._class_resources.get(cls, {})
        try:
            worker.handle = self.launcher.start(worker_id, self.connect_address, resources, env)
        except LaunchError as e:
            log.error("sticky: could not start a worker for template %r: %s", template, e)
            self._lose(worker_id, f"it could not be started: {e}")
            return
        self.metrics.write(
            "worker_started",
            worker=worker_id,
            template=template,
            handle=worker.handle.description,
            pid=getattr(getattr(worker.handle, "process", None), "pid", None),
            slurm_job=getattr(worker.handle, "job_id", None),
        )
        log.info("sticky: started worker %s (%s)", worker_id, worker.handle.description)

    def _callback(
        self, inv_id: int, ok: bool, error: Optional[str], done: Optional[InvocationDone]
    ) -> None:
        self._pending_callbacks.append(lambda: self.on_done(inv_id, ok, error, done))

    def _run_callbacks(self) -> None:
        with self._lock:
            pending, self._pending_callbacks = self._pending_callbacks, []
        for callback in pending:
            try:
                callback()
            except Exception:
                log.exception("sticky: reporting an invocation's outcome to Snakemake failed")

    # ---- teardown ---------------------------------------------------------------------------

    def _reap(self, grace: float) -> None:
        """Wait up to ``grace`` seconds for every worker to exit; kill what does not."""
        deadline = time.monotonic() + grace
        with self._lock:
            handles = [w.handle for w in self.workers.values() if w.handle is not None]
            handles += [handle for handle, _ in self._retiring.values()]
        for handle in handles:
            if not handle.wait(max(0.0, deadline - time.monotonic())):
                log.warning(
                    "sticky: a worker (%s) did not stop within %g s; killing it",
                    handle.description,
                    grace,
                )
                handle.kill()
            handle.release()

    def _close(self) -> None:
        self._closed.set()
        self._server.close()
        self._cut_overdue_handshakes(float("inf"))
        self._wake()
        self._io_thread.join(timeout=5)
        if self._io_thread.is_alive():
            log.warning("sticky: the manager's I/O thread did not stop within 5 s; closing anyway")
        self._run_callbacks()
        with self._lock:
            for worker in self.workers.values():
                _kill(worker)
            self.workers.clear()
        self.launcher.close()
        self.metrics.close()
        if self._trace is not None:
            self._trace.dump()


def _kill(worker: WorkerProcess) -> None:
    """Close a worker's link and end its process or pilot job."""
    if worker.conn is not None:
        try:
            worker.conn.close()
        except OSError:
            pass
    if worker.handle is not None:
        worker.handle.kill()


def _send_quietly(conn: Connection, message: object) -> None:
    try:
        conn.send(message)
    except (OSError, ValueError):
        pass


def _set_recv_timeout(sock: socket.socket, seconds: float) -> None:
    whole = int(seconds)
    sock.setsockopt(
        socket.SOL_SOCKET,
        socket.SO_RCVTIMEO,
        struct.pack("ll", whole, int((seconds - whole) * 1e6)),
    )


def _set_recv_timeout_fd(fd: int, seconds: float) -> None:
    sock = socket.socket(fileno=os.dup(fd))
    try:
        _set_recv_timeout(sock, seconds)
    finally:
        sock.close()
