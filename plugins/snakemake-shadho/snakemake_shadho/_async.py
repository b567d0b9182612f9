"""SHADHO without rounds: a worker that frees asks for its next trial at once.

:class:`AsyncSearch` is the pure core of an asynchronous driver (a long-running process that
hands trials to workers of declared classes, as Work Queue does for the SHADHO paper). It keeps
one queue of planned trials per hardware class. A free worker takes the next trial of its
class's queue (the trials of sub-spaces its class is a specialist of first, as a GPU's CNN
trials, then longest predicted first); if that queue is empty it takes the shortest queued
trial of another class that it may run (the sub-space's allowed classes), so a worker never
idles while a trial it may run waits and the expensive trials stay with the fast classes; but
it leaves a trial whose owner runs it ``SPECIALIST`` times as fast as it would (measured
speeds), unless up to ``REPLANS`` fresh plans give it nothing else. Only
when nothing it may run is queued is a small round planned with :func:`.plan_round` (ranking,
class assignment, load-balanced split, placement), every running trial passed as ``pending``
(TPE's constant liars, and the classes' backlog).

Planning only when the queues are drained keeps each plan as close to the latest results as
the workers allow: on the benchmark's simulated cluster (bench/shadho.py, 40 seeds) planning
whenever the asking class's queue was empty, stealing only as a last resort, found the target
loss on 42% of the seeds against 60% for this order, at the same makespan.

What is proposed depends on the order in which results arrive, as for every asynchronous
search (hyperopt's and Optuna's parallel back-ends too); for one order of calls it is
deterministic (each plan is seeded from ``(spec.seed, plan index)``).
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

from ._ranking import SPECIALIST
from ._rounds import plan_round
from ._spec import SearchSpec

REPLANS = 4
"""How many plans a class's free worker asks for before it takes a trial whose class runs it
``SPECIALIST`` times as fast (each plan's trials are queued and all run)."""


@dataclass
class AsyncSearch:
    """The asynchronous search of ``spec``: :meth:`next_for` a class, :meth:`tell` a result.

    ``batch`` is how many trials one plan proposes (default: the spec's ``trials_per_round``,
    so that each plan sees what a round would: the ranking, the floors and TPE's batch behave
    as in the round design, only without the barrier). Plans of one trial per worker were not
    better: on the real Slurm run of bench/shadho.py (2 workers, 20 seeds, before the
    re-ranking fix of :func:`.ranking_due`) either size gave a worse best loss than plain TPE
    in most seeds (15 of 20 with plans of 2, 14 with plans of 8).
    """

    spec: SearchSpec
    batch: Optional[int] = None
    history: list[dict[str, Any]] = field(default_factory=list)
    plans: int = field(default=0, init=False)
    stolen: int = field(default=0, init=False)
    last_plan: Optional[dict[str, Any]] = field(default=None, init=False)
    _queues: dict[str, list[dict[str, Any]]] = field(default_factory=dict, init=False)
    _running: dict[str, dict[str, Any]] = field(default_factory=dict, init=False)
    _ranking: Optional[Mapping[str, Any]] = field(default=None, init=False)
    _speeds: dict[tuple[str, str], float] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        self._queues = {name: [] for name in self.spec.classes}
        if self.batch is None:
            self.batch = self.spec.trials_per_round
        if self.batch < 1:
            raise ValueError(f"batch must be at least 1 (got {self.batch})")

    @property
    def queued(self) -> int:
        return sum(len(q) for q in self._queues.values())

    def next_for(self, hw_class: str) -> dict[str, Any]:
        """The trial a free worker of ``hw_class`` runs next (a :func:`.plan_round` trial,
        ``hw_class`` set to the class that runs it)."""
        if hw_class not in self._queues:
            raise KeyError(
                f"unknown hardware class {hw_class!r} (declared: {sorted(self._queues)})"
            )
        trial = self._pop(hw_class)
        # Plan until this class has a trial of its own: with small plans (trials_per_round 1)
        # one plan is often a specialist's trial only. Then, rather than idle, it takes one.
        for _ in range(REPLANS):
            if trial is not None:
                break
            self._plan()
            trial = self._pop(hw_class)
        if trial is None:
            trial = self._pop(hw_class, spare_specialists=False)
        if trial is None:
            raise RuntimeError(
                f"hardware class {hw_class!r} may run none of the planned sub-spaces "
                "(check the sub-spaces' hardware restrictions)"
            )
        self._running[trial["trial"]] = trial
        return trial

    def tell(self, trial: Mapping[str, Any], loss: Optional[float], duration_s: float) -> None:
        """Record the result of a trial handed out by :meth:`next_for` (``loss`` None: it
        failed); ``duration_s`` is its measured run time, which teaches the class speeds."""
        planned = self._running.pop(str(trial["trial"]), None)
        if planned is None:
            raise KeyError(f"trial {trial['trial']!r} was not handed out or was told already")
        result = {
            **planned,
            "status": "ok" if loss is not None else "fail",
            "loss": loss,
            "duration_s": float(duration_s),
        }
        # Handed out once (popped from the running trials above), so never recorded twice:
        # appending is what merge_round would do for a plan of this one trial, without
        # copying the whole history on every result.
        self.history.append(result)

    def _pending(self) -> list[dict[str, Any]]:
        return [*self._running.values(), *(t for q in self._queues.values() for t in q)]

    def _plan(self) -> None:
        plan = plan_round(
            self.spec,
            self.plans,
            self.history,
            self._ranking,
            n_trials=self.batch,
            pending=self._pending(),
        )
        self.plans += 1
        self._ranking = plan["ranking"]
        self.last_plan = plan
        self._speeds = {(r["hw_class"], r["subspace"]): r["measured"] for r in plan["speeds"]}
        # Each class's queue: its specialist trials first (a GPU's CNN trials, which another
        # class would run many times slower), then the first trial of a sub-space it has not
        # run (its speed there is measured from it), then longest predicted first.
        ran = {(t["hw_class"], t["subspace"]) for t in [*self.history, *self._pending()]}
        for trial in sorted(
            plan["trials"],
            key=lambda t: (
                not self._specialist(t["hw_class"], t),
                (t["hw_class"], t["subspace"]) in ran,
                -t["predicted_cost"],
            ),
        ):
            self._queues[trial["hw_class"]].append(trial)
            ran.add((trial["hw_class"], trial["subspace"]))

    def _speed(self, hw_class: str, subspace: str) -> float:
        """``hw_class``'s speed on ``subspace`` as the last plan measured it."""
        return self._speeds.get((hw_class, subspace), 1.0)

    def _specialist(self, owner: str, trial: Mapping[str, Any]) -> bool:
        """Whether ``owner`` runs ``trial``'s sub-space ``SPECIALIST`` times as fast as some
        other class that may run it."""
        sub = trial["subspace"]
        others = [self._speed(c, sub) for c in self.spec.classes_of(sub) if c != owner]
        return bool(others) and self._speed(owner, sub) >= SPECIALIST * min(others)

    def _pop(self, hw_class: str, spare_specialists: bool = True) -> Optional[dict[str, Any]]:
        if self._queues[hw_class]:
            return self._queues[hw_class].pop(0)
        # Steal the shortest trial this class may run from another class's queue; not one the
        # owner is a specialist of and this class is not (unless ``spare_specialists`` is
        # False): a CPU worker that takes a GPU's CNN trial runs it many times slower than
        # the GPU would, a moment later.
        best: Optional[tuple[float, str, int]] = None
        for owner, queue in self._queues.items():
            for i, t in enumerate(queue):
                if hw_class not in self.spec.classes_of(t["subspace"]):
                    continue
                sub = t["subspace"]
                if spare_specialists and self._speed(owner, sub) >= SPECIALIST * self._speed(
                    hw_class, sub
                ):
                    continue
                key = (float(t["predicted_cost"]), owner, i)
                if best is None or key < best:
                    best = key
        if best is None:
            return None
        _, owner, i = best
        trial = dict(self._queues[owner].pop(i), hw_class=hw_class)
        self.stolen += 1
        return trial
