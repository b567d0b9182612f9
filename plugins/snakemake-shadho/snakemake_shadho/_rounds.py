"""One round of a search: plan it from the history, and fold its results into the history.

A round is stateless apart from its inputs (the records so far and the previous ranking), and
every random choice is seeded from ``(spec.seed, round, sub-space)``: planning a round twice
gives the same trials, so a search interrupted at any point resumes without repeating or
losing a trial.
"""

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from typing import Any, Optional

import numpy as np

from ._complexity import log_complexity
from ._costmodel import predict_costs
from ._hardware import by_speed
from ._ranking import (
    SubspaceStats,
    assign_classes,
    place_trials,
    rank_subspaces,
    split_round,
    subspace_stats,
)
from ._spec import SearchSpec
from ._tpe import SubspaceOptimizer

CostPredictor = Callable[[str, Mapping[str, Any]], float]


def trial_name(subspace: str, tid: int) -> str:
    """The file-name-safe id of a trial: its sub-space and hyperopt id, e.g. ``svm_rbf.7``."""
    return f"{subspace}.{tid}"


def compute_stats(
    spec: SearchSpec, history: Sequence[Mapping[str, Any]]
) -> dict[str, SubspaceStats]:
    """Statistics of every sub-space from the finished records."""
    out = {}
    for name, sub in spec.subspaces.items():
        speeds = {c.name: c.speed_of(name) for c in spec.classes.values()}
        records = [r for r in history if r["subspace"] == name]
        out[name] = subspace_stats(
            name, log_complexity(sub.space), records, speeds, spec.min_results
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


def plan_round(
    spec: SearchSpec,
    round_index: int,
    history: Sequence[Mapping[str, Any]],
    previous_ranking: Optional[Mapping[str, Any]] = None,
    n_trials: Optional[int] = None,
    cost_predictor: Optional[CostPredictor] = None,
) -> dict[str, Any]:
    """The plan of one round: the ranking, which classes serve which sub-spaces, and the trials.

    The ranking is recomputed when none exists yet or when ``spec.rerank_every`` results have
    arrived since it was made; otherwise the previous one is kept. ``cost_predictor(subspace,
    vals)`` replaces the built-in per-trial cost model when given (it returns the reference
    cost, in seconds on a speed-1 worker); the benchmark uses it for a perfect-knowledge bound.
    """
    stats = compute_stats(spec, history)
    done = len(history)
    if previous_ranking is None or done - int(previous_ranking["at_results"]) >= spec.rerank_every:
        ranking: dict[str, Any] = {
            "order": rank_subspaces(list(stats.values())),
            "at_results": done,
        }
    else:
        ranking = dict(previous_ranking)
    classes = by_speed(spec.classes)
    allowed = {s: spec.classes_of(s) for s in spec.subspaces}
    serving = assign_classes(ranking["order"], classes, allowed)
    costs = _predicted_costs(stats)
    rng = np.random.default_rng(_seed(spec.seed, round_index))
    # Every unexplored sub-space first gets the trials it still needs (min_results finished),
    # dealt in turns in ranking order: the ranking cannot judge it before, and round 0 would
    # otherwise give the least complex sub-space a twentieth of the trials on complexity alone.
    floor = {
        name: spec.min_results - (stats[name].n_ok + stats[name].n_failed)
        for name in ranking["order"]
        if not stats[name].explored
    }
    pairs = split_round(
        spec.trials_per_round if n_trials is None else n_trials,
        classes,
        serving,
        costs,
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
        space = spec.subspaces[name].space
        optimizer = SubspaceOptimizer(space, [_tpe_record(r) for r in mine], spec.n_startup_jobs)
        asked = optimizer.ask(wanted, _seed(spec.seed, round_index, index))
        if cost_predictor is None:
            speeds = {c.name: c.speed_of(name) for c in classes}
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
    for trial, cls in zip(
        trials,
        place_trials(
            [t["predicted_cost"] for t in trials],
            candidates,
            classes,
            [t["subspace"] for t in trials],
        ),
        strict=True,
    ):
        trial["hw_class"] = cls
    return {
        "round": round_index,
        "ranking": ranking,
        "serving": serving,
        "stats": {n: asdict(s) for n, s in stats.items()},
        "trials": trials,
    }


def _tpe_record(record: Mapping[str, Any]) -> dict[str, Any]:
    return {k: record.get(k) for k in ("tid", "vals", "status", "loss")}


def merge_round(
    history: Sequence[Mapping[str, Any]],
    plan: Mapping[str, Any],
    results: Sequence[Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """The history after a round: its records plus this round's, one per planned trial.

    Raises ValueError if a planned trial has no result or a result was not planned: a round's
    results must match its plan exactly.
    """
    by_name = {r["trial"]: dict(r) for r in results}
    planned = {t["trial"] for t in plan["trials"]}
    missing = planned - set(by_name)
    extra = set(by_name) - planned
    if missing or extra:
        raise ValueError(
            f"round {plan['round']}: results do not match the plan "
            f"(missing {sorted(missing)}, unplanned {sorted(extra)})"
        )
    seen = {r["trial"] for r in history}
    repeated = planned & seen
    if repeated:
        raise ValueError(f"round {plan['round']} repeats recorded trials {sorted(repeated)}")
    return [*map(dict, history), *(by_name[t["trial"]] for t in plan["trials"])]
