"""The pure core: ready jobs in one priority queue per resource shape.

Snakemake's greedy scheduler (greediness 1) takes, again and again, the ready job with the
highest reward that still fits the free resources, re-weighting every ready job each time:
O(ready jobs) per pick. Jobs with the same resource vector (their *shape*) are interchangeable
for fitting, so the same choice comes from the heads of one heap per shape: the best job is
the best head among the shapes that fit, and once a shape does not fit no job of it does.
Selecting k jobs costs O(k * shapes + k log n); a job enters a heap once, when it becomes
ready, and its reward is computed then.
"""

import heapq
import itertools
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any

Shape = tuple[int, ...]
# The heap key: the negated reward (so the heap's minimum is the best job), then the arrival
# number (ties go to the job that became ready first).
Key = tuple[Any, ...]


class UnsupportedResources(Exception):
    """A job or the free resources are not plain integers (the greedy fallback handles it)."""


@dataclass
class ReadyQueues:
    """The ready jobs that the scheduler has seen and not yet selected.

    ``reward(job)`` returns the greedy scheduler's reward: a tuple compared lexicographically
    (higher is better); ``weights(job)`` the job's scheduler resources.
    """

    reward: Callable[[Any], tuple[Any, ...]]
    weights: Callable[[Any], Mapping[str, Any]]
    names: tuple[str, ...] = ()
    _heaps: dict[Shape, list[tuple[Key, int, Any]]] = field(default_factory=dict)
    # job -> (its shape, the arrival number of its live heap entry); other entries are stale.
    _live: dict[Hashable, tuple[Shape, int]] = field(default_factory=dict)
    _arrivals: Any = field(default_factory=itertools.count)

    def __len__(self) -> int:
        return len(self._live)

    def known(self) -> Any:
        """The jobs in the queues (a live view: do not mutate)."""
        return self._live.keys()

    def reset(self, names: tuple[str, ...]) -> None:
        self.names = names
        self._heaps.clear()
        self._live.clear()

    def add(self, job: Any) -> None:
        res = self.weights(job)
        shape = tuple(res.get(name, 0) for name in self.names)
        for value in shape:
            if not isinstance(value, int):
                raise UnsupportedResources(f"non-integer resource in {dict(res)}")
        arrival = next(self._arrivals)
        key = (*(_negate(part) for part in self.reward(job)), arrival)
        self._live[job] = (shape, arrival)
        heapq.heappush(self._heaps.setdefault(shape, []), (key, arrival, job))

    def discard(self, job: Any) -> None:
        """Forget a job (its heap entry turns stale and is dropped when it surfaces)."""
        self._live.pop(job, None)

    def select(self, free: Mapping[str, Any]) -> list[Any]:
        """Pop the jobs the greedy scheduler would pick with these free resources."""
        budget = [free[name] for name in self.names]
        for value in budget:
            if not isinstance(value, int):
                raise UnsupportedResources(f"non-integer free resource in {dict(free)}")
        chosen: list[Any] = []
        while True:
            best: Any = None
            for shape, heap in list(self._heaps.items()):
                self._drop_stale(heap)
                if not heap:
                    del self._heaps[shape]
                    continue
                if not _fits(shape, budget):
                    continue
                if best is None or heap[0][0] < best[0][0]:
                    best = heap
            if best is None:
                return chosen
            _, _, job = heapq.heappop(best)
            shape, _ = self._live.pop(job)
            for i, used in enumerate(shape):
                budget[i] -= used
            chosen.append(job)

    def _drop_stale(self, heap: list[tuple[Key, int, Any]]) -> None:
        live = self._live
        while heap:
            _, arrival, job = heap[0]
            entry = live.get(job)
            if entry is not None and entry[1] == arrival:
                return
            heapq.heappop(heap)


def _fits(shape: Shape, budget: list[int]) -> bool:
    # As the greedy scheduler: a resource the job does not use (0) never blocks it.
    for used, left in zip(shape, budget, strict=True):
        if used > 0 and used > left:
            return False
    return True


def _negate(value: Any) -> Any:
    return -value
