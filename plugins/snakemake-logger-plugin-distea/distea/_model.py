"""What the logs say happened: processes with clocks, messages, and Snakemake jobs.

Kept columnar (lists of numbers per process, names interned) so that a million events cost
tens of megabytes and the queries can use numpy, instead of one Python object per event.
"""

import contextlib
import gc
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Optional

import numpy as np


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector (as a ``with`` block or a decorator) while the
    analysis builds many long-lived objects: with a million-event trace in memory, the
    collections that the allocations trigger cost as much as the building (they free
    nothing: these objects form no cycles). The previous state is restored; nesting is fine."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass
class Job:
    """One Snakemake job, as the logger plugin (or a plain Snakemake log) recorded it."""

    id: str
    rule: str
    key: str
    wildcards: dict[str, str] = field(default_factory=dict)
    inputs: list[tuple[str, Optional[str]]] = field(default_factory=list)
    outputs: list[tuple[str, Optional[str]]] = field(default_factory=list)
    start: float = 0.0
    end: Optional[float] = None
    ok: Optional[bool] = None


@dataclass
class Comm:
    """One end of a message: a send or a receive at a clock of a process."""

    message: str
    clock: int
    peer: Optional[str]
    job: Optional[str]


@dataclass
class StateNote:
    """What a sticky worker found about its carried state at the end of one request."""

    job: str
    clock: int
    written: Optional[bool]
    """True: the state (template states, workflow module globals, global RNGs) changed during
    the request; False: it provably did not; None: it could not tell (counts as changed)."""
    evidence: str


@dataclass
class Process:
    """One traced process (a script run, a sticky worker, a sticky manager)."""

    name: str
    role: str
    file: str
    job: Optional[str] = None
    fn_ids: list[int] = field(default_factory=list)
    fn_first: list[int] = field(default_factory=list)
    fn_last: list[int] = field(default_factory=list)
    sends: list[Comm] = field(default_factory=list)
    recvs: list[Comm] = field(default_factory=list)
    opens: dict[str, int] = field(default_factory=dict)
    """Path -> clock of its first read in this process."""
    writes: list[tuple[str, int]] = field(default_factory=list)
    """(path, clock) of the first write of each file (per request for a worker)."""
    reads: list[tuple[str, int]] = field(default_factory=list)
    """Every logged read (a sticky worker logs the first read of each request)."""
    params: list[tuple[str, int, Optional[str]]] = field(default_factory=list)
    config: list[tuple[str, int, Optional[str]]] = field(default_factory=list)
    """(key path, clock, job) of each config read (``model.alpha``; ``model.*``: all of it)."""
    templates: list[tuple[str, int]] = field(default_factory=list)
    digests: list[tuple[str, str, int, str]] = field(default_factory=list)
    states: list["StateNote"] = field(default_factory=list)
    """A sticky worker's evidence, per request, of whether it changed its carried state."""
    input_contexts: list[tuple[str, int]] = field(default_factory=list)
    """Snakemake's process: (job, end clock) of each computation of a job's input in which
    workflow code ran (an input function): it decided which jobs produce those inputs."""
    contexts: list[tuple[str, int, int, int, bool]] = field(default_factory=list)
    """Snakemake's process: (job, start, end, feed, feeds the job's end) of each computation
    done for a job."""
    end: Optional[int] = None
    mode: Optional[str] = None
    """The tracer's mechanism (``wrap``, ``settrace``, ``monitoring``, ...); None: unknown."""
    complete: Optional[bool] = None
    """True when the tracer saw every call of a workflow function however it was reached;
    None (older logs) counts as False."""
    host: str = ""
    pid: str = ""
    worker_id: Optional[str] = None
    parent: Optional[str] = None
    """The traced process that started this one (a child: forked, spawned, a subprocess)."""
    parent_clock: Optional[int] = None
    """The parent's clock when it started this one; None: unknown (its last clock for the
    job counts, which over-approximates)."""
    forked: bool = False
    """A child made by ``fork`` (traced by construction, not started as a program)."""
    spawns: list[tuple[int, Optional[str], tuple[str, ...]]] = field(default_factory=list)
    """(clock, job, argv) of each program this process started."""

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(function ids, first clocks, last clocks) as numpy arrays, built once."""
        cached = getattr(self, "_arrays", None)
        if cached is None:
            cached = (
                np.asarray(self.fn_ids, dtype=np.int64),
                np.asarray(self.fn_first, dtype=np.int64),
                np.asarray(self.fn_last, dtype=np.int64),
            )
            self._arrays = cached
        return cached

    @property
    def last_clock(self) -> int:
        """The latest clock this process is known to have reached."""
        candidates = [self.end or 0, *(c.clock for c in self.sends[-1:]), *self.fn_last[-1:]]
        candidates += [c.clock for c in self.recvs[-1:]]
        if self.fn_last:
            candidates.append(max(self.fn_last))
        return max(candidates)


@dataclass
class Trace:
    """Everything read from one log directory."""

    processes: dict[str, Process] = field(default_factory=dict)
    jobs: dict[str, Job] = field(default_factory=dict)
    """By job key."""
    functions: list[str] = field(default_factory=list)
    function_ids: dict[str, int] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    events: int = 0
    config_files: dict[str, dict[str, str]] = field(default_factory=dict)
    """Config files Snakemake loaded (relative path) -> leaf key path -> value digest."""
    workdir: Optional[str] = None
    """The workflow directory Snakemake ran in (from the logger's header), if known."""

    def function_id(self, name: str) -> int:
        fid = self.function_ids.get(name)
        if fid is None:
            fid = len(self.functions)
            self.functions.append(name)
            self.function_ids[name] = fid
        return fid

    def jobs_by_output(self) -> dict[str, Job]:
        return {path: job for job in self.jobs.values() for path, _ in job.outputs}
