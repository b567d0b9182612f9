"""One round of a search: plan it from the history, and fold its results into the history.

A round is stateless apart from its inputs (the records so far and the previous ranking), and
every random choice is seeded from ``(spec.seed, round, sub-space)``: planning a round twice
gives the same trials, so a search interrupted at any point resumes without repeating or
losing a trial.
"""

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict
from typing import Any, Optional

import numpy as np

from ._complexity import log_complexity
from ._costmodel import coordinates, domain_scales, predict_costs
from ._hardware import HardwareClass, by_speed
from ._history import merge_round
from ._ranking import (
    SubspaceStats,
    assign_classes,
    incumbent,
    place_trials,
    rank_subspaces,
    specialist_of,
    split_round,
    subspace_stats,
)
from ._spec import SearchSpec
from ._speeds import (
    SpeedEstimate,
    estimate_speeds,
    measured_classes,
    slower_than_declared,
    speeds_table,
)
from ._tpe import SubspaceOptimizer

__all__ = [
    "compute_stats",
    "measure_speeds",
    "merge_round",
    "plan_round",
    "ranking_due",
    "trial_name",
]

CostPredictor = Callable[[str, Mapping[str, Any]], float]


def trial_name(subspace: str, tid: int) -> str:
    """The file-name-safe id of a trial: its sub-space and hyperopt id, e.g. ``svm_rbf.7``."""
    return f"{subspace}.{tid}"


def compute_stats(
    spec: SearchSpec,
    history: Sequence[Mapping[str, Any]],
    classes: Optional[Mapping[str, HardwareClass]] = None,
) -> dict[str, SubspaceStats]:
    """Statistics of every sub-space from the finished records; reference costs use
    ``classes``' speeds (default: the declared ones). A sub-space is explored once it has
    ``spec.explore_floor`` records."""
    classes = spec.classes if classes is None else classes
    out = {}
    for name, sub in spec.subspaces.items():
        speeds = {c.name: c.speed_of(name) for c in classes.values()}
        records = [r for r in history if r["subspace"] == name]
        out[name] = subspace_stats(
            name, log_complexity(sub.space), records, speeds, spec.explore_floor
        )
    return out


def _predicted_costs(stats: Mapping[str, SubspaceStats]) -> dict[str, float]:
    """Mean reference cost per sub-space; a sub-space not yet run gets the mean of those that
    have, and before any trial has run all costs are equal (1.0).

    Complexity is no proxy for cost: it measures how large a space is to search, not how long
    one trial takes (on the digits space the CNN, 4th of 5 in complexity, costs the most per
    trial). Predicting equal costs spreads the first round by capacity alone."""
    known = [s.mean_cost for s in stats.values() if s.mean_cost is not None]
    if not known:
        return {n: 1.0 for n in stats}
    default = float(np.mean(known))
    return {n: s.mean_cost if s.mean_cost is not None else default for n, s in stats.items()}


def _seed(*parts: int) -> int:
    return int(np.random.SeedSequence(list(parts)).generate_state(1)[0])


def measure_speeds(
    spec: SearchSpec, history: Sequence[Mapping[str, Any]]
) -> dict[tuple[str, str], SpeedEstimate]:
    """Every class's measured speed per sub-space (:mod:`._speeds`), the configurations'
    unit-cube coordinates explaining cost differences within a sub-space."""
    scales = {name: domain_scales(sub.space) for name, sub in spec.subspaces.items()}
    return estimate_speeds(
        spec.classes,
        list(spec.subspaces),
        history,
        features=lambda r: coordinates(r.get("vals") or {}, scales[r["subspace"]]),
    )


def _spread_lead(
    lead: Optional[str], classes: Sequence[HardwareClass], allowed: Mapping[str, Sequence[str]]
) -> Optional[str]:
    """``lead``, or None when one of ``classes`` is its specialist."""
    if lead is None:
        return None
    hosts = [c for c in classes if c.name in allowed[lead]]
    return None if specialist_of(lead, hosts) is not None else lead


def ranking_due(previous: Mapping[str, Any], done: int, pending: int, rerank_every: int) -> bool:
    """Is a new ranking due after ``previous``, with ``done`` results and ``pending`` trials
    still running?

    Due when ``rerank_every`` trials have been decided (finished or pending) since
    ``previous`` was made. Counting results alone made a plan that runs
    beside other trials (``execution: async``, pipelined rounds) re-rank one plan late: the
    asynchronous driver plans its second batch with 7 of 8 results in and a trial running, so
    that whole batch was split by the prior ranking (complexity alone). On the real run's
    cluster (bench/shadho_quality.py, 20 seeds of 48 trials) that gave the CNN a median of 11.5
    trials against 15.5 in rounds, and a best loss worse than plain TPE's in 12 of 20 seeds.

    >>> ranking_due({"at_results": 0, "at_trials": 0}, 7, 1, 8)
    True
    >>> ranking_due({"at_results": 0}, 7, 0, 8)
    False
    """
    since = int(previous.get("at_trials", previous["at_results"]))
    return done + pending - since >= rerank_every


def plan_round(
    spec: SearchSpec,
    round_index: int,
    history: Sequence[Mapping[str, Any]],
    previous_ranking: Optional[Mapping[str, Any]] = None,
    n_trials: Optional[int] = None,
    cost_predictor: Optional[CostPredictor] = None,
    pending: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The plan of one round: the ranking, which classes serve which sub-spaces, and the trials.

    The ranking is recomputed when none exists yet or when ``spec.rerank_every`` trials have
    been decided since it was made (finished or ``pending``: :func:`ranking_due`); otherwise
    the previous one is kept. ``cost_predictor(subspace, vals)`` replaces the built-in
    per-trial cost model when given (it returns the reference cost, in seconds on a speed-1
    worker); the benchmark uses it for a perfect-knowledge bound.
    ``pending`` are planned trials (of rounds still running, ``spec.pipeline_depth`` > 1)
    without results yet: TPE treats them as pending and they count toward the floors.

    Which trials are proposed (sub-spaces, hyperopt ids and values) depends on the losses, the
    declared classes and the seed only; measured durations decide where each trial runs
    (``hw_class``), unless ``spec.duration_aware_split`` lets them decide the split too.
    """
    estimates = measure_speeds(spec, history)
    measured = measured_classes(spec.classes, estimates)
    stats = compute_stats(spec, history, measured)
    done = len(history)
    if previous_ranking is None or ranking_due(
        previous_ranking, done, len(pending), spec.rerank_every
    ):
        ranking: dict[str, Any] = {
            "order": rank_subspaces(list(stats.values())),
            "lead": incumbent(list(stats.values())),
            "at_results": done,
            "at_trials": done + len(pending),
        }
    else:
        ranking = dict(previous_ranking)
    allowed = {s: spec.classes_of(s) for s in spec.subspaces}
    declared = by_speed(spec.classes)
    placing = by_speed(measured)
    # The incumbent is served by every class unless it has a specialist (assign_classes
    # checks the classes it is given): the split asks the declared speeds, so that what is
    # proposed depends on the declarations alone; placement the measured ones too.
    lead = ranking.get("lead")
    serving = assign_classes(
        ranking["order"], placing, allowed, _spread_lead(lead, declared, allowed)
    )
    costs = _predicted_costs(stats)
    rng = np.random.default_rng(_seed(spec.seed, round_index))
    waiting = {name: sum(1 for t in pending if t["subspace"] == name) for name in spec.subspaces}
    # Every unexplored sub-space first gets the trials it still needs (its exploration floor,
    # less what it has pending), dealt in turns in ranking order: the ranking cannot judge it
    # before, and round 0 would otherwise give the least complex sub-space a twentieth of the
    # trials on complexity alone.
    floor = {
        name: spec.explore_floor - (stats[name].n_ok + stats[name].n_failed + waiting[name])
        for name in ranking["order"]
        if not stats[name].explored
    }
    floor = {name: n for name, n in floor.items() if n > 0}
    if spec.duration_aware_split:
        split_classes, split_serving, split_costs = placing, serving, costs
    else:
        split_classes = declared
        split_serving = assign_classes(ranking["order"], declared, allowed, lead)
        split_costs = dict.fromkeys(spec.subspaces, 1.0)
    pairs = split_round(
        spec.trials_per_round if n_trials is None else n_trials,
        split_classes,
        split_serving,
        split_costs,
        rng,
        spec.planck_lambda,
        floor,
    )
    trials: list[dict[str, Any]] = []
    for index, name in enumerate(spec.subspaces):
        wanted = sum(1 for _, sub in pairs if sub == name)
        if not wanted:
            continue
        mine = [r for r in history if r["subspace"] == name]
        waiting_records = [
            {**_tpe_record(t), "status": "pending", "loss": None}
            for t in pending
            if t["subspace"] == name
        ]
        space = spec.subspaces[name].space
        optimizer = SubspaceOptimizer(
            space, [*map(_tpe_record, mine), *waiting_records], spec.n_startup_jobs
        )
        asked = optimizer.ask(wanted, _seed(spec.seed, round_index, index))
        if cost_predictor is None:
            speeds = {c.name: c.speed_of(name) for c in placing}
            predicted = predict_costs(space, mine, [s.vals for s in asked], speeds, costs[name])
        else:
            predicted = [float(cost_predictor(name, s.vals)) for s in asked]
        for suggestion, cost in zip(asked, predicted, strict=True):
            trials.append(
                {
                    "trial": trial_name(name, suggestion.tid),
                    "round": round_index,
                    "subspace": name,
                    "tid": suggestion.tid,
                    "vals": suggestion.vals,
                    "params": suggestion.params,
                    "predicted_cost": cost,
                }
            )
    candidates = [[c for c, subs in serving.items() if t["subspace"] in subs] for t in trials]
    specialised = {
        name
        for name in spec.subspaces
        if specialist_of(name, [c for c in placing if c.name in allowed[name]]) is not None
    }
    for trial, cls in zip(
        trials,
        place_trials(
            [t["predicted_cost"] for t in trials],
            candidates,
            placing,
            [t["subspace"] for t in trials],
            [allowed[t["subspace"]] for t in trials],
            _backlog(pending, measured),
        ),
        strict=True,
    ):
        trial["hw_class"] = cls
    _calibrate(trials, serving, [*history, *pending], placing)
    _cover(trials, allowed, [*history, *pending], [c.name for c in placing], specialised)
    return {
        "round": round_index,
        "ranking": ranking,
        "serving": serving,
        "stats": {n: asdict(s) for n, s in stats.items()},
        "explore_floor": spec.explore_floor,
        "speeds": speeds_table(estimates),
        "slower_than_declared": slower_than_declared(estimates, spec.classes),
        "trials": trials,
    }


def _backlog(
    pending: Sequence[Mapping[str, Any]], classes: Mapping[str, HardwareClass]
) -> dict[str, float]:
    """Predicted busy time each class still has queued: its pending trials' predicted costs
    over its (measured) speed on their sub-spaces. Pipelined rounds place a round's trials
    behind that backlog, not on idle classes."""
    out: dict[str, float] = {}
    for t in pending:
        cls = classes.get(str(t.get("hw_class")))
        if cls is None or t.get("predicted_cost") is None:
            continue
        cost = float(t["predicted_cost"]) / cls.speed_of(t["subspace"])
        out[cls.name] = out.get(cls.name, 0.0) + cost
    return out


def _calibrate(
    trials: list[dict[str, Any]],
    serving: Mapping[str, Sequence[str]],
    seen_records: Sequence[Mapping[str, Any]],
    classes: Sequence[HardwareClass],
) -> None:
    """Make every two classes that share a sub-space comparable: their relative speed is
    measurable (:mod:`._speeds`) only through sub-spaces both ran, directly or through other
    classes (a GPU and a vector unit, each a specialist of its own sub-space, are compared
    through the CPUs that ran SVMs beside each). If a pair is not connected so by what ran (or
    is pending and planned), a trial of a shared sub-space this round moves to the class
    missing it, provided the other class keeps one (or has run it before): the move that slows
    its trial least (the ratio of the two classes' speeds on it: a GPU's CNN trial moved to a
    CPU runs 40 times slower, an SVM trial moved to the GPU no slower), then the shortest.
    Changes placement only, never which trials are proposed."""
    seen = {(r.get("hw_class"), r.get("subspace")) for r in seen_records}
    speed = {c.name: c for c in classes}
    names = [c.name for c in classes]

    def connected(a: str, b: str, cells: set[tuple[Any, Any]]) -> bool:
        """Whether classes a and b are linked through sub-spaces both ends of each link ran."""
        reached, frontier = {a}, [a]
        while frontier:
            x = frontier.pop()
            for sub in {s for cls, s in cells if cls == x}:
                for y in {cls for cls, s in cells if s == sub} - reached:
                    reached.add(y)
                    frontier.append(y)
        return b in reached

    for i, c in enumerate(names):
        for d in names[i + 1 :]:
            shared = [s for s in serving.get(c, []) if s in serving.get(d, [])]
            here = seen | {(t["hw_class"], t["subspace"]) for t in trials}
            if not shared or connected(c, d, here):
                continue
            moves = []
            for s in shared:
                for lacking, other in ((c, d), (d, c)):
                    if (lacking, s) in here:
                        continue
                    on_other = [t for t in trials if t["subspace"] == s and t["hw_class"] == other]
                    if on_other and (len(on_other) > 1 or (other, s) in seen):
                        slowdown = speed[other].speed_of(s) / speed[lacking].speed_of(s)
                        for t in on_other:
                            moves.append((slowdown, t["predicted_cost"], t["tid"], s, lacking, t))
            if moves:
                *_, lacking, t = min(moves, key=lambda m: m[:3])
                t["hw_class"] = lacking


def _cover(
    trials: list[dict[str, Any]],
    allowed: Mapping[str, Sequence[str]],
    seen_records: Sequence[Mapping[str, Any]],
    classes: Sequence[str],
    specialised: Collection[str] = (),
) -> None:
    """Make every class run, once, every sub-space it may run and that has no specialist yet:
    a class's speed on a sub-space is measured only from a trial there, and a class many times
    faster on one sub-space than on the others (a GPU on the CNN, undeclared) is found no other
    way. Once a sub-space has a specialist (declared or measured), the other classes are not
    sent its trials to be measured: each would run one many times slower (a red-team case with
    six classes ran several CNN trials on classes 10-130 times slower than its A100). For each
    class (fastest first) and each such sub-space it has not run nor been given, the shortest
    trial of that sub-space this round moves to it, provided its class keeps another one (or
    has run it before).
    Changes placement only, never which trials are proposed."""
    seen = {(r.get("hw_class"), r.get("subspace")) for r in seen_records}
    unsettled = sorted({t["subspace"] for t in trials} - set(specialised))
    for c in classes:
        for sub in unsettled:
            here = seen | {(t["hw_class"], t["subspace"]) for t in trials}
            if c not in allowed[sub] or (c, sub) in here:
                continue
            mine = sorted(
                (t for t in trials if t["subspace"] == sub),
                key=lambda t: (t["predicted_cost"], t["tid"]),
            )
            for t in mine:
                others = [u for u in mine if u["hw_class"] == t["hw_class"]]
                if len(others) > 1 or (t["hw_class"], sub) in seen:
                    t["hw_class"] = c
                    break


def _tpe_record(record: Mapping[str, Any]) -> dict[str, Any]:
    return {k: record.get(k) for k in ("tid", "vals", "status", "loss")}
