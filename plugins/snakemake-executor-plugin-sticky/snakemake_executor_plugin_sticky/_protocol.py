"""Messages between the sticky manager (in the Snakemake process) and its workers.

Transport: :mod:`multiprocessing.connection` over TCP, bound to loopback by default. Every
connection first passes the stdlib HMAC challenge with a per-run random secret in both
directions, so only processes holding the secret can talk; a peer without it is refused and
logged before any message is unpickled. Messages are the dataclasses below, pickled.

::

    worker                                   manager
      |---- connect + HMAC challenge ----------->|   (refused without the run secret)
      |---- Hello(worker_id, pid, host, ver) --->|   version checked
      |<--- Invoke(invocation 1, template T) ----|   routed: workers holding T first
      |     (builds T once: StateBuilt/Failed) ->|
      |---- InvocationDone(1, ok|error) -------->|   pushed, not polled
      |---- Heartbeat (every second) ----------->|   silence past the timeout = lost
      |<--- Stop --------------------------------|   teardown, exit
      |---- WorkerExited(fate, cause) ---------->|   the process that ran invocations ended

Heartbeats and ``WorkerExited`` come from the worker's supervisor (:mod:`.supervisor`), the
parent of the process that runs invocations, over the same connection.

With ``$DISTEA_TRACE`` set (post-hoc impact analysis, :mod:`distea`), ``Invoke`` and
``InvocationDone`` carry a :class:`TraceStamp` (message id, sender's Lamport clock) and both
sides log every send and receipt; nothing changes otherwise.
"""

import os
import socket
import sys
from dataclasses import dataclass, field
from typing import Any, Optional

from ._shell_prefix import PrefixEffects

TRACE_ENV = "DISTEA_TRACE"

PROTOCOL_VERSION = 1


@dataclass(frozen=True)
class TraceStamp:
    """Piggybacked on a message when tracing: its id and the sender's logical clock."""

    message_id: str
    clock: int


def message_trace(role: str, **fields: Any) -> Any:
    """This process's DISTEA trace when ``$DISTEA_TRACE`` names a folder, else None.

    The manager lives in the Snakemake process and only logs messages; a worker also traces
    the workflow's own functions (template builders, scripts, helper modules).
    """
    folder = os.environ.get(TRACE_ENV)
    if not folder:
        return None
    try:
        from distea import tracer
    except ImportError as e:  # tracing is optional: never let it stop a run
        print(
            f"sticky: {TRACE_ENV} is set but distea cannot be imported ({e}); not tracing",
            file=sys.stderr,
        )
        return None

    if role == "sticky-manager":
        return tracer.ProcessTrace(folder, role, **fields)
    return tracer.start(role, **fields)


def job_name(smk: Any) -> str:
    """The DISTEA job key of a job's ``snakemake`` object (rule + outputs)."""
    from distea import job_key

    return job_key(smk.rule, dict(smk.wildcards.items()), list(smk.output))


@dataclass(frozen=True)
class Hello:
    """First message of a worker: who it is, and which protocol it speaks."""

    worker_id: str
    pid: int
    host: str = field(default_factory=socket.gethostname)
    protocol_version: int = PROTOCOL_VERSION


@dataclass(frozen=True)
class Heartbeat:
    """Sent by a worker's supervisor every second. ``note`` set: the worker process exists but
    is not alive (stopped, or silent and idle); the manager does not count it as a beat."""

    note: Optional[str] = None


@dataclass(frozen=True)
class WorkerExited:
    """The worker's invocation process ended; its supervisor says how and what follows.

    ``fate``: a :class:`~._liveness.Fate` (the job's code ended it: succeed or fail once;
    something else did: requeue). ``cause``: one line for the user."""

    fate: Any
    cause: str
    exit_status: Optional[int] = None
    signal_number: Optional[int] = None


@dataclass(frozen=True)
class Invoke:
    """Run one invocation (one Snakemake job's ``script:``) against a template's state."""

    invocation_id: int
    template: str
    templates_file: str
    script_path: str
    script_source: str
    scriptdir: Optional[str]
    snakemake: Any
    """The job's ``snakemake.script.Snakemake`` object, as a ``script:`` preamble builds it."""
    repeats: int = 1
    benchmarked: bool = False
    """The job has a ``benchmark:`` file: measure its process's memory and I/O too."""
    trace: Optional[TraceStamp] = None
    isolation: str = "fork"
    """``fork`` (run in a child forked from the template process) or ``direct`` (run in the
    worker, checked after)."""
    workdir: str = ""
    """Snakemake's working directory (where a ``script:`` job's temporary script would be)."""
    searchpaths: Optional[list[str]] = None
    """What the ``script:`` preamble appends to ``sys.path`` (Snakemake's own paths, the cached
    source's folder, the script's folder), as computed by Snakemake."""
    prefix: Optional[PrefixEffects] = None
    """What the Snakefile's ``shell.prefix()`` does to a ``script:`` job (:mod:`._shell_prefix`)."""


@dataclass(frozen=True)
class StateBuilt:
    """A worker finished building a template's state."""

    template: str
    seconds: float
    direct_because: Optional[str] = None
    """Set when the template's invocations run in direct mode although it asked for fork
    mode: why this worker's process cannot be forked (a GPU runtime, threads)."""
    writes: tuple[str, ...] = ()
    """Files the build changed in the working directory (the audit hook's view; relative
    where inside it): a non-sticky job running meanwhile is not blamed for them."""


@dataclass(frozen=True)
class StateFailed:
    """A template raised while building; the traceback is the template's own."""

    template: str
    traceback: str


@dataclass(frozen=True)
class InvocationDone:
    """The outcome of one :class:`Invoke`."""

    invocation_id: int
    ok: bool
    error: Optional[str] = None
    seconds: list[float] = field(default_factory=list)
    """Wall seconds of each benchmark repeat."""
    cpu_seconds: list[float] = field(default_factory=list)
    max_rss_mb: Optional[float] = None
    usage: dict[str, float] = field(default_factory=dict)
    """Memory peaks and I/O in MB for ``benchmark:`` (``_isolation.process_usage``)."""
    template_failed: bool = False
    trace: Optional[TraceStamp] = None
    warnings: list[str] = field(default_factory=list)
    """What the invocation did that isolation could not fully undo, one line each."""
    undeclared_writes: list[str] = field(default_factory=list)
    """Paths the script changed outside its outputs and logs (see ``_audit``)."""
    retire: Optional[str] = None
    """Direct mode: what the invocation changed in the worker's process; the worker is
    stopped and the next job gets a fresh one."""
    lost: Optional[str] = None
    """Fork mode: the invocation's process was killed from outside (why): the invocation is
    requeued, as when a worker is lost; the worker itself is well. With ``retire`` too: not
    run, since what its template's build read or made changed after the last job (another
    process's write): requeued for a fresh worker, this one stopped."""
    imported: list[str] = field(default_factory=list)
    """Fork mode: installed libraries the script imported that the template had not (each
    forked invocation imports them again)."""


@dataclass(frozen=True)
class Stop:
    """Ask a worker to tear its states down and exit."""


@dataclass(frozen=True)
class TornDown:
    """A stopping worker tore its templates down (its last message)."""

    writes: tuple[str, ...] = ()
    """Files the teardowns changed (the audit hook's view, as for :class:`StateBuilt`): a
    non-sticky job running meanwhile (beside a retired worker) is not blamed for them."""


@dataclass(frozen=True)
class Refused:
    """Sent instead of work when the manager will not use a worker (e.g. version mismatch)."""

    reason: str
