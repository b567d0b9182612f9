"""Routing of invocations to sticky workers, as a pure state machine.

Every method takes an event (an invocation arrived, a worker connected, finished, died, time
passed) and returns the instructions the manager must carry out. Nothing here does I/O, so the
policy is tested by feeding events and comparing instruction lists.

Policy, in order, for each queued invocation (oldest first, requeued ones at the front):

1. an idle worker that already holds the invocation's template (affinity: no build);
2. an idle worker that holds no state yet (it was started for this demand);
3. otherwise it waits, and a new worker is started while there are fewer than
   ``max_workers`` workers (and, for a template with a limit in ``max_per_template``, fewer
   workers started for it than that limit) and more waiting invocations than workers
   already starting. At the limit, an idle worker holding other templates is stopped to make
   room, if no live worker holds this template, or if the invocation has waited
   ``steal_after`` seconds for a holder to free up.

A worker builds **one template**: an invocation runs in a process (or a fork of one) where
only its own template was built, as under ``--executor local``, where a job's process builds
only its own. Another template's build would leave its imports, warning filters, thread pools
and library settings in the process (issue 25).

Workers have a *class*: the resources they were started with (a Slurm pilot for a GPU template
is not one for a CPU template). A worker only takes invocations whose template maps to its
class; locally every worker is of the same class. When the worker limit is reached and a class
has waiting invocations but no worker at all, an idle worker of another class is stopped to
make room.

A worker that dies takes nothing with it: its invocation goes back to the front of the queue
(``Requeue``; it does not count as a failed attempt) until it has been requeued
``max_requeues`` times. Unless the job's own code ended the worker's process (``os._exit``, a
signal it sent itself, a crash in C code): then the invocation ends once, as a fresh run would
(``FailInvocation``, or ``FinishInvocation`` for status 0), and is not requeued.

A worker that dies while it builds the invocation's template (before ``state_built``: a pilot
preempted while loading its model) is not the invocation's fault: the invocation is requeued
without using up its budget, and the loss counts against the template in that worker class,
as a worker that fails to start does: ``max_start_failures`` such losses in a row (no build of
the template in that class succeeding in between) fail the template, as a build error does.

Idle workers stop after ``idle_timeout`` seconds. A cancelled run (Ctrl-C) drops every
invocation and kills busy workers at once: nothing is "lost" or requeued.
"""

import itertools
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Optional, Union

from ._liveness import Fate


class Phase(Enum):
    STARTING = "starting"
    IDLE = "idle"
    BUSY = "busy"
    STOPPING = "stopping"


@dataclass
class Invocation:
    id: int
    template: str
    queued_at: float
    requeues: int = 0
    cls: str = ""


@dataclass
class WorkerSlot:
    id: str
    phase: Phase
    since: float
    templates: set[str] = field(default_factory=set)
    current: Optional[int] = None
    cls: str = ""
    started_for: str = ""
    """The template whose invocation made the scheduler start this worker."""


@dataclass(frozen=True)
class StartWorker:
    """Start a worker for ``template``'s class (its resources decide where it runs)."""

    worker_id: str
    template: str = field(default="", compare=False)
    cls: str = field(default="", compare=False)


@dataclass(frozen=True)
class Dispatch:
    worker_id: str
    invocation_id: int


@dataclass(frozen=True)
class StopWorker:
    worker_id: str
    reason: str
    kill: bool = False
    """Kill it now instead of asking it to tear down (a cancelled run's busy worker)."""


@dataclass(frozen=True)
class FailInvocation:
    invocation_id: int
    reason: str


@dataclass(frozen=True)
class Requeue:
    """The invocation lost its worker: remove its partial outputs, it will run again."""

    invocation_id: int
    worker_id: str


@dataclass(frozen=True)
class FinishInvocation:
    """The invocation's code ended its worker process with status 0: it succeeded."""

    invocation_id: int


Instruction = Union[StartWorker, Dispatch, StopWorker, FailInvocation, Requeue, FinishInvocation]


class StickyScheduler:
    """Decides which worker runs which invocation, and when workers start and stop."""

    def __init__(
        self,
        *,
        max_workers: int,
        max_per_template: Optional[dict[str, int]] = None,
        idle_timeout: float = 300.0,
        steal_after: float = 2.0,
        max_requeues: int = 3,
        max_start_failures: int = 3,
        class_of: Optional[Callable[[str], str]] = None,
    ) -> None:
        if max_workers < 1:
            raise ValueError("max_workers must be at least 1")
        self.max_workers = max_workers
        self.max_per_template = dict(max_per_template or {})
        if any(n < 1 for n in self.max_per_template.values()):
            raise ValueError("a template's worker limit must be at least 1")
        self.idle_timeout = idle_timeout
        self.steal_after = steal_after
        self.max_requeues = max_requeues
        self.max_start_failures = max_start_failures
        self.class_of: Callable[[str], str] = class_of or (lambda template: "")
        self.workers: dict[str, WorkerSlot] = {}
        self.invocations: dict[int, Invocation] = {}
        self.queue: deque[int] = deque()
        self.failed_templates: dict[str, str] = {}
        self.failed_classes: dict[str, str] = {}
        self._start_failures: Counter[str] = Counter()
        self.retiring: dict[str, frozenset[str]] = {}
        """Retired workers whose process may still be ending (its template's teardown, its
        exit handlers), by id: their templates. A fresh run's next job starts after the last
        one's process ended, so no worker for these templates starts until then."""
        # (class, template) -> workers lost in a row while building the template
        self._build_losses: Counter[tuple[str, str]] = Counter()
        self._ids = itertools.count(1)

    # ---- events -------------------------------------------------------------------------

    def submit(
        self, invocation_id: int, template: str, now: float, cls: Optional[str] = None
    ) -> list[Instruction]:
        """A job for ``template`` arrived; ``cls`` is the worker class it needs (default:
        ``class_of(template)``)."""
        cls = self.class_of(template) if cls is None else cls
        if template in self.failed_templates:
            return [FailInvocation(invocation_id, self.failed_templates[template])]
        if cls in self.failed_classes:
            return [FailInvocation(invocation_id, self.failed_classes[cls])]
        self.invocations[invocation_id] = Invocation(invocation_id, template, now, cls=cls)
        self.queue.append(invocation_id)
        return self._assign(now)

    def worker_connected(self, worker_id: str, now: float) -> list[Instruction]:
        slot = self.workers.get(worker_id)
        if slot is None or slot.phase is not Phase.STARTING:
            return []
        slot.phase, slot.since = Phase.IDLE, now
        self._start_failures[slot.cls] = 0
        return self._assign(now)

    def state_built(self, worker_id: str, template: str) -> None:
        slot = self.workers.get(worker_id)
        if slot is not None:
            slot.templates.add(template)
            self._build_losses.pop((slot.cls, template), None)

    def invocation_done(
        self, worker_id: str, invocation_id: int, now: float, retire: Optional[str] = None
    ) -> list[Instruction]:
        """The worker reported an outcome (success or failure) for its invocation.
        ``retire``: its process changed (direct mode), so it takes no more work: it is
        stopped, and waiting invocations get a fresh worker."""
        self.invocations.pop(invocation_id, None)
        slot = self.workers.get(worker_id)
        out: list[Instruction] = []
        if slot is not None and slot.current == invocation_id:
            slot.current = None
            slot.phase, slot.since = Phase.IDLE, now
            if retire is not None:
                slot.phase = Phase.STOPPING
                self.retiring[slot.id] = frozenset({*slot.templates, slot.started_for})
                out.append(StopWorker(slot.id, f"retired: {retire}"))
        return out + self._assign(now)

    def worker_exited(self, worker_id: str, now: float) -> list[Instruction]:
        """A retired worker's process has ended (or the manager stopped waiting for it):
        workers for its templates may start again."""
        if self.retiring.pop(worker_id, None) is None:
            return []
        return self._assign(now)

    def template_failed(self, template: str, reason: str, now: float) -> list[Instruction]:
        """A template cannot be built: fail all that waits for it, and anything later."""
        self.failed_templates[template] = reason
        out: list[Instruction] = []
        for inv_id in [i for i in self.queue if self.invocations[i].template == template]:
            self.queue.remove(inv_id)
            self.invocations.pop(inv_id)
            out.append(FailInvocation(inv_id, reason))
        return out + self._assign(now)

    def worker_lost(
        self, worker_id: str, now: float, reason: str, fate: Fate = Fate.REQUEUE
    ) -> list[Instruction]:
        """A worker exited or stopped answering. What it ran goes back to the queue, unless
        ``fate`` says the job's own code ended the process: then it ends once, so."""
        slot = self.workers.pop(worker_id, None)
        if slot is None:
            return []
        out: list[Instruction] = []
        if slot.phase is Phase.STARTING:
            self._start_failures[slot.cls] += 1
            failures = self._start_failures[slot.cls]
            if failures >= self.max_start_failures:
                msg = f"sticky workers failed to start {failures} times ({reason})"
                self.failed_classes[slot.cls] = msg
                out += self._fail_queue(msg, slot.cls)
        if slot.current is not None and fate is not Fate.REQUEUE:
            self.invocations.pop(slot.current)
            if fate is Fate.SUCCEED:
                out.append(FinishInvocation(slot.current))
            else:
                out.append(FailInvocation(slot.current, reason))
        elif slot.current is not None and self.invocations[slot.current].template not in (
            slot.templates
        ):
            out += self._lost_while_building(slot, worker_id, now, reason)
        elif slot.current is not None:
            out += self._requeue(self.invocations[slot.current], worker_id, now, reason)
        return out + self._assign(now)

    def invocation_lost(
        self,
        worker_id: str,
        invocation_id: int,
        now: float,
        reason: str,
        retire: Optional[str] = None,
    ) -> list[Instruction]:
        """The process running the invocation (a fork-mode child) was killed from outside;
        the worker itself is well and takes work again. The invocation is requeued, as when
        a worker is lost. ``retire``: the worker did not run it, its template being out of
        date (what its build read changed since the last job): the worker is stopped, and
        the invocation gets a fresh one."""
        slot = self.workers.get(worker_id)
        if slot is not None and slot.current == invocation_id:
            slot.current = None
            slot.phase, slot.since = Phase.IDLE, now
            if retire is not None:
                slot.phase = Phase.STOPPING
                self.retiring[slot.id] = frozenset({*slot.templates, slot.started_for})
        stop = [StopWorker(slot.id, f"retired: {retire}")] if slot and retire is not None else []
        inv = self.invocations.get(invocation_id)
        # Not run (``retire``): not counted, as no job was lost. Each fresh worker runs its
        # first job on what it just built, so requeues for this reason always make progress.
        counted = retire is None
        out = self._requeue(inv, worker_id, now, reason, counted) if inv is not None else []
        return stop + out + self._assign(now)

    def _requeue(
        self, inv: Invocation, worker_id: str, now: float, reason: str, counted: bool = True
    ) -> list[Instruction]:
        inv.requeues += counted
        if inv.requeues > self.max_requeues:
            self.invocations.pop(inv.id)
            return [
                FailInvocation(
                    inv.id, f"lost its sticky worker {inv.requeues} times (last: {reason})"
                )
            ]
        inv.queued_at = now
        self.queue.appendleft(inv.id)
        return [Requeue(inv.id, worker_id)]

    def tick(self, now: float) -> list[Instruction]:
        """Time passed: stop workers idle too long, let waiting invocations move on."""
        out = self._assign(now)
        if not self.queue:
            for slot in list(self.workers.values()):
                if slot.phase is Phase.IDLE and now - slot.since >= self.idle_timeout:
                    slot.phase = Phase.STOPPING
                    out.append(StopWorker(slot.id, f"idle for {self.idle_timeout:g} s"))
        return out

    def stop_all(self, reason: str) -> list[Instruction]:
        """End of run: stop every worker (the manager waits for their teardown)."""
        out: list[Instruction] = []
        for slot in self.workers.values():
            if slot.phase is not Phase.STOPPING:
                slot.phase = Phase.STOPPING
                out.append(StopWorker(slot.id, reason))
        return out

    def cancel_all(self, reason: str) -> list[Instruction]:
        """Ctrl-C (or a failed run): forget every invocation, kill busy workers now, ask idle
        ones to tear down. Nothing is requeued and no worker counts as lost."""
        out: list[Instruction] = []
        self.queue.clear()
        self.invocations.clear()
        for slot in self.workers.values():
            busy = slot.current is not None or slot.phase is Phase.STARTING
            slot.current = None
            if slot.phase is not Phase.STOPPING or busy:
                slot.phase = Phase.STOPPING
                out.append(StopWorker(slot.id, reason, kill=busy))
        return out

    # ---- policy ---------------------------------------------------------------------------

    def _lost_while_building(
        self, slot: WorkerSlot, worker_id: str, now: float, reason: str
    ) -> list[Instruction]:
        """``slot`` died building the template of its invocation: requeue the invocation
        (free of charge), count the loss against the template in the worker's class."""
        assert slot.current is not None
        inv = self.invocations[slot.current]
        key = (slot.cls, inv.template)
        self._build_losses[key] += 1
        losses = self._build_losses[key]
        out: list[Instruction] = [Requeue(inv.id, worker_id)]
        inv.queued_at = now
        self.queue.appendleft(inv.id)
        if losses >= self.max_start_failures:
            msg = (
                f"sticky workers were lost {losses} times in a row while building template "
                f"{inv.template!r} (last: {reason})"
            )
            del self._build_losses[key]
            self.failed_templates[inv.template] = msg
            doomed = [i for i in self.queue if self.invocations[i].template == inv.template]
            for inv_id in doomed:
                self.queue.remove(inv_id)
                self.invocations.pop(inv_id)
            out = [FailInvocation(i, msg) for i in doomed]
        return out

    def _fail_queue(self, reason: str, cls: str) -> list[Instruction]:
        """Fail every waiting invocation of one worker class (the others may still run)."""
        doomed = [i for i in self.queue if self.invocations[i].cls == cls]
        for inv_id in doomed:
            self.queue.remove(inv_id)
            self.invocations.pop(inv_id)
        return [FailInvocation(i, reason) for i in doomed]

    def _holders(self, inv: Invocation) -> list[WorkerSlot]:
        return [
            w
            for w in self.workers.values()
            if inv.template in w.templates and w.cls == inv.cls and w.phase is not Phase.STOPPING
        ]

    def _retiring_templates(self) -> set[str]:
        """The templates of retired workers whose processes have not ended: no worker builds
        them until then, as a fresh job starts after the last one's process."""
        return set().union(*self.retiring.values()) if self.retiring else set()

    def _pick_worker(self, inv: Invocation, now: float) -> Optional[WorkerSlot]:
        idle = [w for w in self.workers.values() if w.phase is Phase.IDLE and w.cls == inv.cls]
        if not idle:
            return None
        for w in idle:
            if inv.template in w.templates:
                return w
        if inv.template in self._retiring_templates():
            return None  # no build of it before the retired worker's process ended
        for w in idle:
            if not w.templates:
                return w
        return None

    def _assign(self, now: float) -> list[Instruction]:
        out: list[Instruction] = []
        for inv_id in list(self.queue):
            inv = self.invocations[inv_id]
            worker = self._pick_worker(inv, now)
            if worker is None:
                continue
            self.queue.remove(inv_id)
            if not worker.templates:
                # A fresh worker builds the first template it is sent, which need not be the
                # one it was started for (workers connect in any order): it counts against
                # the limit of the template it holds, or a requeued invocation of the other
                # template would wait for it for ever.
                worker.started_for = inv.template
            worker.phase, worker.current, worker.since = Phase.BUSY, inv_id, now
            out.append(Dispatch(worker.id, inv_id))
        out += self._start_workers(now)
        return out

    def _room_for(self, inv: Invocation, live: list[WorkerSlot], now: float) -> bool:
        """Whether to stop a worker of other templates for ``inv`` (its class has workers):
        none of them holds its template or holds nothing yet, or its holders have been busy
        for ``steal_after`` seconds."""
        mine = [w for w in live if w.cls == inv.cls]
        if any(not w.templates for w in mine):
            return False  # an empty worker (starting, or building) will take it
        if not any(inv.template in w.templates for w in mine):
            return True
        return now - inv.queued_at >= self.steal_after

    @staticmethod
    def _spare(cls: str, template: str, live: list[WorkerSlot]) -> Optional[WorkerSlot]:
        """An idle worker to stop: of another class first, else one of this class holding
        other templates."""
        idle = [w for w in live if w.phase is Phase.IDLE]
        return next((w for w in idle if w.cls != cls), None) or next(
            (w for w in idle if w.cls == cls and w.templates and template not in w.templates),
            None,
        )

    def _start_key(self, cls: str, template: str) -> tuple[str, str]:
        return cls, template if template in self.max_per_template else ""

    def _start_workers(self, now: float) -> list[Instruction]:
        """Start workers for waiting invocations, per class, within ``max_workers``."""
        out: list[Instruction] = []
        live = [w for w in self.workers.values() if w.phase is not Phase.STOPPING]
        # Workers on their way count for the waiting invocations they can take: of their
        # class, and of their template where it has a limit of its own.
        starting = Counter(
            self._start_key(w.cls, w.started_for) for w in live if w.phase is Phase.STARTING
        )
        live_classes = Counter(w.cls for w in live)
        ending = self._retiring_templates()
        for inv_id in self.queue:
            template, cls = self.invocations[inv_id].template, self.invocations[inv_id].cls
            if template in ending:
                continue  # after the retired worker's process, as a fresh job after the last
            key = self._start_key(cls, template)
            if starting[key] > 0:
                starting[key] -= 1  # a worker of this class is on its way for it
                continue
            cap = self.max_per_template.get(template)
            if cap is not None:
                mine = [w for w in live if w.started_for == template]
                if len(mine) >= cap:
                    if any(w.cls == cls for w in mine):
                        continue  # wait for one of this template's workers
                    spare = next((w for w in mine if w.phase is Phase.IDLE), None)
                    if spare is None:
                        continue
                    spare.phase = Phase.STOPPING
                    live.remove(spare)
                    live_classes[spare.cls] -= 1
                    out.append(StopWorker(spare.id, f"making room for a {template!r} worker"))
            if len(live) >= self.max_workers:
                if live_classes[cls] and not self._room_for(self.invocations[inv_id], live, now):
                    continue  # its class has workers that will take it; wait for one
                spare = self._spare(cls, template, live)
                if spare is None:
                    continue
                spare.phase = Phase.STOPPING
                live.remove(spare)
                live_classes[spare.cls] -= 1
                out.append(StopWorker(spare.id, f"making room for a {template!r} worker"))
            worker_id = f"w{next(self._ids)}"
            slot = WorkerSlot(worker_id, Phase.STARTING, now, cls=cls, started_for=template)
            self.workers[worker_id] = slot
            live.append(slot)
            live_classes[cls] += 1
            out.append(StartWorker(worker_id, template, cls))
        return out
