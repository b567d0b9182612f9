r"""The SHADHO heuristics, fixed: sub-space statistics, a Borda ranking, the assignment of ranked
sub-spaces to hardware classes, and the split of a round's trials across classes.

Statistics of sub-space s from its successful results :math:`\ell_1..\ell_n` (once
``min_results`` of its trials have finished; before that s is *unexplored*):

- performance :math:`b_s = \min_i \ell_i` (the best loss; lower is more promising);
- uncertainty :math:`u_s`, the exact bootstrap standard deviation of the best loss: resampling
  the n successful losses with replacement, the minimum of a resample is the k-th smallest loss
  with probability :math:`((n-k+1)/n)^n - ((n-k)/n)^n`; :math:`u_s` is the standard deviation
  of that distribution (0 with fewer than two successful results). It says how far the best
  loss of s would move had its trials come out differently, which is what one more trial of s
  can buy. It replaces the standard error of the mean loss, which one catastrophic loss (0.9
  among losses near 0.02) inflates tenfold: here a loss enters only as often as it is the
  minimum of a resample, :math:`n^{-n}` for the worst (see docs/shadho-execution.md). The
  paper's term, the spread of fitted GP length-scales over 50 refits, took 1.5 s per sub-space
  per ranking here and saturated at the kernel's bounds on small histories;
- cost :math:`\bar c_s`, the mean reference cost of its trials (duration times the speed of
  the class that ran it), used to predict how long its next trials take.

Ranking, in two steps.

1. SHADHO's Borda order (lower is better; a Borda count instead of the reference code's product
   of positions, which ties every sub-space that is first in any ordering at 0): order the
   sub-spaces by complexity (descending), by performance (ascending) and by uncertainty
   (descending); unexplored sub-spaces come first in the last two. A sub-space's position in
   an ordering is the number of sub-spaces strictly ahead of it. Its score is the sum of its
   three positions; order by score, ties broken by higher complexity, then by name.
2. The incumbent leads: the explored sub-space holding the best loss so far (ties by name)
   moves to the front; the others keep their Borda order.

Why step 2: in a Borda count performance is one vote in three, so a sub-space that is small
(low complexity) and settled (low uncertainty) sinks however good it is. On the digits space
the CNN, which holds every one of the best results, ranked 4th or 5th of 5 and got about 10%
of the trials where plain TPE gives it half, and the search missed TPE's best loss. Leading
with the incumbent guarantees the most promising sub-space the largest share (and the fastest
class) while complexity and uncertainty still order, and so feed, every other sub-space.

A sub-space is *explored* once ``min_results`` of its trials have finished (successful or
failed). One whose trials all failed is explored with no best loss: it is last on performance
and on uncertainty (0), so a sub-space that only fails sinks instead of staying "unexplored",
and favoured, for ever.

Assignment: classes are sorted fastest first (by measured speed, see :mod:`._speeds`). With n
ranked sub-spaces and m classes, sub-space i's *home* class is :math:`\lfloor i m / n \rfloor`
(n >= m), so the top-ranked block goes to the fastest class. The last sub-space of each block
but the slowest is also served by the next slower class, so every class's set is a contiguous
window of the ranking, adjacent windows overlap by one sub-space, and the top of the ranking
stays on the fastest class. (The reference code shared every sub-space with a neighbour: with
two classes each then served everything and the assignment said nothing.) With n < m, class j
serves sub-space :math:`\lfloor j n / m \rfloor` and a sub-space with a single class also
gets a neighbour.
Restrictions (``_classes``) are then applied, and a specialist class (the fastest on a
sub-space and at least 1.5 times its own speed there, as a GPU on the CNN) is added to the
sub-space's classes, its specialties first in its list. Last, the incumbent (the ranking's
*lead*, recorded when the ranking is made) is served by every class that may run it, heading
each list after the class's specialties, unless it has a specialist, declared or measured (a
GPU's CNN stays off the CPUs; the split asks the declared speeds only, so that measured
durations never change which trials are proposed). Within a window the incumbent had half
the fastest class's draws and none of the others': on the real run's cluster
(bench/shadho_quality.py, 40 held-out seeds of 48 trials) that gave the CNN, which holds the
best results, 13 trials where Optuna's joint TPE gives it 25.5; served everywhere it gets
17-18. The price is time: where no class is the incumbent's specialist, slow classes run some
of its trials too.

Round split: first, every unexplored sub-space gets the trials it still needs to be explored
(its *floor*: ``min_results`` less its finished trials), since the ranking cannot judge it
before; in round 0 that spreads the first trials evenly instead of by complexity alone. Then
trials go one at a time to the class with the least predicted load per capacity
(:math:`L_c / \mathrm{count}_c`, ties to the faster class); the class draws a sub-space from its
ranked list with Planck weights :math:`p_k \propto e^{-\lambda k}` (lambda = 0.5: 0.455, 0.276,
0.167, 0.102 for four), and its load :math:`L_c` grows by that sub-space's predicted cost over
the class's speed on it (``speed``, or its ``speed_by_subspace`` entry). This decides how many
trials each sub-space gets.

Placement: once TPE has proposed the concrete trials, each gets a predicted cost of its own
(:mod:`._costmodel`) and the trials are placed specialists' first, then longest first (ties:
the most constrained first), each on the worker slot (of a class serving its sub-space) where
it would finish earliest, ties to the faster class: the LPT rule for machines of different
speeds. Balancing
predicted finish times is what shortens a round that ends with a barrier.
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

import numpy as np

from ._costmodel import reference_cost
from ._hardware import HardwareClass


@dataclass(frozen=True)
class SubspaceStats:
    """What the trials so far say about one sub-space."""

    name: str
    log_complexity: float
    n_ok: int = 0
    n_failed: int = 0
    best_loss: Optional[float] = None
    uncertainty: Optional[float] = None
    mean_cost: Optional[float] = None

    @property
    def explored(self) -> bool:
        return self.uncertainty is not None


def best_loss_spread(losses: Sequence[float]) -> float:
    """Exact bootstrap standard deviation of the minimum of ``losses`` (0 for fewer than 2).

    >>> round(best_loss_spread([0.1, 0.2]), 4)
    0.0433
    """
    x = np.sort(np.asarray(losses, dtype=float))
    n = len(x)
    if n < 2:
        return 0.0
    k = np.arange(n)
    p = ((n - k) / n) ** n - ((n - k - 1) / n) ** n
    mean = float(p @ x)
    return float(math.sqrt(max(float(p @ (x - mean) ** 2), 0.0)))


def subspace_stats(
    name: str,
    log_complexity: float,
    records: Sequence[Mapping[str, Any]],
    speeds: Mapping[str, float],
    min_results: int = 3,
) -> SubspaceStats:
    """Statistics of one sub-space from its finished trial records.

    A record has ``status`` ("ok" or "fail"), ``loss``, ``hw_class`` and ``duration_s``; its
    reference cost is ``duration_s * speeds[hw_class]``. The sub-space is explored once
    ``min_results`` records exist (its exploration floor), whatever their status.
    """
    losses = [float(r["loss"]) for r in records if r.get("status") == "ok"]
    costs = [c for r in records if (c := reference_cost(r, speeds)) is not None]
    n = len(losses)
    uncertainty = None
    if len(records) >= min_results:
        uncertainty = best_loss_spread(losses)
    return SubspaceStats(
        name=name,
        log_complexity=log_complexity,
        n_ok=n,
        n_failed=len(records) - n,
        best_loss=min(losses) if n else None,
        uncertainty=uncertainty,
        mean_cost=float(np.mean(costs)) if costs else None,
    )


def _positions(keys: Mapping[str, float]) -> dict[str, int]:
    """Position of each item: how many items have a strictly smaller key."""
    return {name: sum(other < key for other in keys.values()) for name, key in keys.items()}


def _performance_key(s: SubspaceStats) -> float:
    """Lower is more promising: unexplored first, then by best loss, explored-but-never-
    successful last."""
    if not s.explored:
        return -math.inf
    return s.best_loss if s.best_loss is not None else math.inf


def borda_scores(stats: Sequence[SubspaceStats]) -> dict[str, int]:
    """Sum of each sub-space's positions in the three orderings (see the module docstring)."""
    complexity = _positions({s.name: -s.log_complexity for s in stats})
    performance = _positions({s.name: _performance_key(s) for s in stats})
    uncertainty = _positions(
        {s.name: -s.uncertainty if s.explored else -math.inf for s in stats}  # type: ignore[operator]
    )
    return {s.name: complexity[s.name] + performance[s.name] + uncertainty[s.name] for s in stats}


def borda_order(stats: Sequence[SubspaceStats]) -> list[str]:
    """Sub-space names by Borda score, best (most complex, promising and uncertain) first."""
    scores = borda_scores(stats)
    ordered = sorted(stats, key=lambda s: (scores[s.name], -s.log_complexity, s.name))
    return [s.name for s in ordered]


def incumbent(stats: Sequence[SubspaceStats]) -> Optional[str]:
    """The explored sub-space holding the best loss so far (ties by name), or None."""
    held = [s for s in stats if s.explored and s.best_loss is not None]
    if not held:
        return None
    return min(held, key=lambda s: (s.best_loss, s.name)).name


def rank_subspaces(stats: Sequence[SubspaceStats]) -> list[str]:
    """The ranking: the incumbent first, then the others in Borda order (module docstring)."""
    order = borda_order(stats)
    lead = incumbent(stats)
    if lead is None:
        return order
    return [lead, *(name for name in order if name != lead)]


def _home_blocks(n: int, m: int) -> list[list[int]]:
    """For each of n ranked sub-spaces, the class indices (of m) it belongs to before overlap."""
    if n >= m:
        return [[i * m // n] for i in range(n)]
    homes: list[list[int]] = [[] for _ in range(n)]
    for j in range(m):
        homes[j * n // m].append(j)
    return homes


def assign_blocks(n: int, m: int) -> list[list[int]]:
    """Class indices (0 = fastest) serving each of n ranked sub-spaces, over m classes.

    >>> assign_blocks(4, 2)
    [[0], [0, 1], [1], [1]]
    >>> assign_blocks(4, 1)
    [[0], [0], [0], [0]]
    """
    if n <= 0 or m <= 0:
        return [[] for _ in range(max(n, 0))]
    homes = _home_blocks(n, m)
    if m == 1:
        return homes
    if n < m:
        result = []
        for home in homes:
            if len(home) == 1:
                j = home[0]
                home = [j, j - 1] if j > 0 else [j, j + 1]
            result.append(home)
        return result
    result = [list(home) for home in homes]
    for i in range(n - 1):
        j = homes[i][0]
        if homes[i + 1][0] != j:  # i ends block j: the next slower class also serves it
            result[i].append(j + 1)
    return result


SPECIALIST = 1.5
"""How much faster than its overall speed a class must be on a sub-space to be that sub-space's
specialist (measured speeds vary by sub-space by noise alone; a GPU on a CNN by 4 to 16x)."""


def assign_classes(
    ranking: Sequence[str],
    classes: Sequence[HardwareClass],
    allowed: Mapping[str, Sequence[str]],
    lead: Optional[str] = None,
) -> dict[str, list[str]]:
    """Each class's sub-spaces, in ranking order. ``classes`` must be sorted fastest first;
    ``allowed[s]`` lists the classes that may run sub-space s.

    A sub-space left with no class by its restrictions goes to its allowed class nearest its
    home; a *specialist* class, the fastest allowed class on a sub-space and at least
    ``SPECIALIST`` times as fast there as its own overall speed (``speed_by_subspace``,
    declared or measured), also serves it wherever the sub-space ranks, so a GPU class always
    gets the CNN, and heads its list (its Planck draws favour it); a class left with no
    sub-space takes those of the nearest class that it may run.

    ``lead`` (the incumbent) is served by every class that may run it, at the head of each
    list after the class's specialties, unless it has a specialist: then the windows decide,
    as for any other sub-space (a GPU's CNN stays off the CPUs).
    """
    names = [c.name for c in classes]
    blocks = assign_blocks(len(ranking), len(classes))
    serving: dict[str, list[str]] = {c: [] for c in names}
    specialties: dict[str, set[str]] = {c: set() for c in names}
    for sub, block in zip(ranking, blocks, strict=True):
        ok = [names[j] for j in block if names[j] in allowed[sub]]
        if not ok and allowed[sub]:
            home = block[0]
            ok = [min(allowed[sub], key=lambda c: (abs(names.index(c) - home), names.index(c)))]
        specialist = specialist_of(sub, [c for c in classes if c.name in allowed[sub]])
        if specialist is not None:
            specialties[specialist.name].add(sub)
            if specialist.name not in ok:
                ok.append(specialist.name)
        for c in ok:
            serving[c].append(sub)
    for j, c in enumerate(names):
        if serving[c]:
            continue
        for k in sorted(range(len(names)), key=lambda k: (abs(k - j), k)):
            borrowed = [s for s in serving[names[k]] if c in allowed[s]]
            if borrowed:
                serving[c] = borrowed
                break
    # A specialist's own sub-spaces head its list (its Planck draws favour what it is fast
    # at); otherwise ranking order.
    order = {s: i for i, s in enumerate(ranking)}

    leads = set()
    if lead is not None and lead in order:
        if specialist_of(lead, [c for c in classes if c.name in allowed[lead]]) is None:
            leads = {lead}
            for c in names:
                if c in allowed[lead] and lead not in serving[c]:
                    serving[c].append(lead)

    def listed(c: str) -> list[str]:
        return sorted(serving[c], key=lambda s: (s not in specialties[c], s not in leads, order[s]))

    return {c: listed(c) for c in serving}


def specialist_of(subspace: str, hosts: Sequence[HardwareClass]) -> Optional[HardwareClass]:
    """The class among ``hosts`` that is a specialist of ``subspace``: the fastest there, and at
    least ``SPECIALIST`` times as fast there as its own overall speed (None if none is)."""
    if not hosts:
        return None
    fastest = max(hosts, key=lambda c: c.speed_of(subspace))
    return fastest if fastest.speed_of(subspace) >= SPECIALIST * fastest.speed else None


def planck_weights(n: int, lam: float = 0.5) -> list[float]:
    """Normalised discrete Planck weights over n ranked positions.

    For example::

        >>> [round(w, 3) for w in planck_weights(4)]
        [0.455, 0.276, 0.167, 0.102]
    """
    raw = [math.exp(-lam * k) for k in range(n)]
    total = sum(raw)
    return [w / total for w in raw]


def split_round(
    n_trials: int,
    classes: Sequence[HardwareClass],
    serving: Mapping[str, Sequence[str]],
    predicted_cost: Mapping[str, float],
    rng: np.random.Generator,
    lam: float = 0.5,
    floor: Optional[Mapping[str, int]] = None,
) -> list[tuple[str, str]]:
    """``n_trials`` (class, sub-space) pairs balancing the classes' predicted busy time per
    worker (a trial adds its predicted reference cost over the class's speed on its sub-space).

    ``floor[s]`` trials of sub-space s come first (the trials an unexplored sub-space still
    needs before the ranking can judge it), dealt one per sub-space in turn in ``floor`` order
    so that a round too small for every floor still starts every sub-space; each goes to the
    least-loaded class serving s, and the rest are Planck draws. ``classes`` fastest
    first; classes serving nothing get no trials.
    """
    active = [c for c in classes if serving.get(c.name)]
    if not active:
        raise ValueError("no hardware class serves any sub-space")
    load = {c.name: 0.0 for c in active}
    out: list[tuple[str, str]] = []

    def least_loaded(candidates: Sequence[HardwareClass]) -> HardwareClass:
        return min(candidates, key=lambda c: (load[c.name] / c.count, -c.speed))

    def add(cls: HardwareClass, sub: str) -> None:
        load[cls.name] += predicted_cost[sub] / cls.speed_of(sub)
        out.append((cls.name, sub))

    floor = dict(floor or {})
    for turn in range(max(floor.values(), default=0)):
        for sub, wanted in floor.items():
            hosts = [c for c in active if sub in serving[c.name]]
            if turn >= wanted or not hosts or len(out) == n_trials:
                continue
            add(least_loaded(hosts), sub)
    while len(out) < n_trials:
        cls = least_loaded(active)
        subs = serving[cls.name]
        add(cls, subs[int(rng.choice(len(subs), p=planck_weights(len(subs), lam)))])
    return out


def place_trials(
    predicted: Sequence[float],
    candidates: Sequence[Sequence[str]],
    classes: Sequence[HardwareClass],
    subspaces: Optional[Sequence[str]] = None,
    allowed: Optional[Sequence[Sequence[str]]] = None,
    backlog: Optional[Mapping[str, float]] = None,
) -> list[str]:
    """The class of each trial: longest predicted first (ties: fewest candidate classes
    first), each on the worker slot (among its candidate classes) where it would finish
    earliest; ``classes`` fastest first. ``subspaces[i]``, when given, is trial i's sub-space,
    for classes whose speed depends on it (``speed_by_subspace``).

    ``allowed[i]``, when given, are the classes that *may* run trial i beyond its candidates
    (those serving its sub-space): a trial goes to one of them only when that class would
    finish it before any candidate could even start it (an idle class steals work rather than
    wait), so an assignment never leaves a class idle behind a queue it could help drain.
    ``backlog[c]``, when given, is the predicted busy time already queued on class c (the
    pending trials of the rounds still running), spread over its workers before placing.

    >>> fast, slow = HardwareClass("fast", count=1, speed=2), HardwareClass("slow", count=2)
    >>> place_trials([4, 1, 1, 2], [["fast", "slow"]] * 4, [fast, slow])
    ['fast', 'slow', 'slow', 'slow']
    """
    queued = backlog or {}
    finish = {c.name: [queued.get(c.name, 0.0) / c.count] * c.count for c in classes}
    out = [""] * len(predicted)

    def best_slot(i: int, names: Sequence[str]) -> Optional[tuple[float, float, str, int]]:
        best: Optional[tuple[float, float, str, int]] = None
        sub = subspaces[i] if subspaces else None
        for c in classes:
            if c.name not in names:
                continue
            slot = min(range(c.count), key=finish[c.name].__getitem__)
            start = finish[c.name][slot]
            end = start + predicted[i] / c.speed_of(sub)
            if best is None or end < best[0] - 1e-12:
                best = (end, start, c.name, slot)
        return best

    # A specialist's trials first (a GPU's CNN trials: placed after the others, they would
    # find it full of trials any class runs as fast, and go to a class many times slower);
    # then longest first; among equal predictions the most constrained (fewest candidate
    # classes) first, so a trial that can only run on one class is not left for a class
    # already full.
    def specialised(i: int) -> bool:
        if not subspaces:
            return False
        may = {*candidates[i], *(allowed[i] if allowed is not None else ())}
        return specialist_of(subspaces[i], [c for c in classes if c.name in may]) is not None

    order = sorted(
        range(len(predicted)), key=lambda i: (not specialised(i), -predicted[i], len(candidates[i]))
    )
    for i in order:
        best = best_slot(i, candidates[i])
        if allowed is not None:
            others = [c for c in allowed[i] if c not in candidates[i]]
            steal = best_slot(i, others) if others else None
            if steal is not None and (best is None or steal[0] <= best[1] + 1e-12):
                best = steal
        if best is None:
            raise ValueError(f"trial {i} has no candidate class among {[c.name for c in classes]}")
        finish[best[2]][best[3]] = best[0]
        out[i] = best[2]
    return out
