"""A discrete-event simulation of round-based searches on a heterogeneous cluster.

What is real and what is simulated: losses and per-trial costs come from a table of really
evaluated configurations (:class:`EvaluatedPool`; a proposal gets the loss and measured CPU cost
of the nearest evaluated configuration of its sub-space); the cluster is simulated. A trial of
reference cost c runs c / speed seconds on a worker of that speed. A round ends when its last
trial ends (the barrier a Snakemake checkpoint puts between rounds); results are told to the
optimisers only then.

Strategies, all with the same sub-spaces, trial budget and round size:

- ``shadho``: :func:`.plan_round` (ranking, class assignment, load-balanced split), then
  inside each class longest-predicted-trial-first onto the earliest-free worker;
- ``agnostic``: the same per-sub-space TPE, sub-spaces drawn uniformly, each trial sent to a
  random class (weighted by worker count, as a random partition choice would) and run there on
  the earliest-free worker in submission order;
- ``agnostic_pull``: as ``agnostic`` but every free worker pulls the next trial from one queue
  (a single pool without classes): the strongest hardware-oblivious placement;
- ``agnostic_same_trials`` (:func:`replay_agnostic`): SHADHO's own trials, round by round,
  placed as ``agnostic`` places them: the gain of placement alone;
- ``tpe``: one hyperopt TPE over the whole space (exclusive choices as an ``hp.choice``),
  asked for a round's trials at once, placed like ``agnostic``.
"""

import heapq
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from hyperopt import hp

from ._costmodel import coordinates, domain_scales
from ._hardware import HardwareClass, by_speed
from ._rounds import merge_round, plan_round
from ._space import space_from_config
from ._spec import SearchSpec
from ._tpe import SubspaceOptimizer


@dataclass
class EvaluatedPool:
    """Really evaluated configurations per sub-space: values, loss, cost (CPU seconds)."""

    entries: dict[str, list[dict[str, Any]]]
    spaces: dict[str, Any]
    _index: dict[str, tuple[np.ndarray, list[dict[str, Any]]]] = field(default_factory=dict)

    def lookup(self, subspace: str, vals: Mapping[str, Any]) -> dict[str, Any]:
        """The evaluated entry nearest to ``vals`` in ``subspace``."""
        if subspace not in self._index:
            scales = domain_scales(self.spaces[subspace])
            rows = self.entries[subspace]
            points = np.array([coordinates(r["vals"], scales) for r in rows])
            self._index[subspace] = (points, rows)
        points, rows = self._index[subspace]
        scales = domain_scales(self.spaces[subspace])
        q = np.array(coordinates(vals, scales))
        return rows[int(np.argmin(((points - q) ** 2).sum(axis=1)))]


@dataclass
class SimTrial:
    subspace: str
    vals: dict[str, Any]
    cost: float
    loss: "float | None"
    predicted: float = 1.0
    worker: int = -1
    end: float = 0.0
    duration: float = 0.0
    round: int = -1


@dataclass
class Cluster:
    """Workers of declared classes; worker i has ``speeds[i]`` and belongs to ``names[i]``
    (class ``of[i]``, whose ``speed_by_subspace`` may make it faster on some sub-spaces)."""

    classes: list[HardwareClass]
    names: list[str] = field(init=False)
    speeds: list[float] = field(init=False)
    of: list[HardwareClass] = field(init=False)

    def __post_init__(self) -> None:
        self.of = [c for c in self.classes for _ in range(c.count)]
        self.names = [c.name for c in self.of]
        self.speeds = [c.speed for c in self.of]

    def workers_of(self, cls: str) -> list[int]:
        return [i for i, n in enumerate(self.names) if n == cls]

    def duration(self, worker: int, trial: "SimTrial") -> float:
        """How long ``trial`` runs on ``worker``: its reference cost over the worker's speed on
        the trial's sub-space."""
        return trial.cost / self.of[worker].speed_of(trial.subspace)


def run_round(cluster: Cluster, queues: Mapping[str, Sequence[SimTrial]], start: float) -> float:
    """Run each class's queue in order on its earliest-free worker; return the round's end.

    The key ``"*"`` is a queue every worker pulls from.
    """
    end = start
    for cls, queue in queues.items():
        workers = range(len(cluster.speeds)) if cls == "*" else cluster.workers_of(cls)
        free = [(start, w) for w in workers]
        heapq.heapify(free)
        for trial in queue:
            t, w = heapq.heappop(free)
            trial.worker = w
            trial.duration = cluster.duration(w, trial)
            trial.end = t + trial.duration
            heapq.heappush(free, (trial.end, w))
            end = max(end, trial.end)
    return end


@dataclass
class SimResult:
    """What a strategy achieved: every trial (with end time) and the round boundaries."""

    strategy: str
    trials: list[SimTrial]
    round_ends: list[float]
    n_workers: int
    speeds: list[float]

    @property
    def makespan(self) -> float:
        return self.round_ends[-1]

    def best_loss(self) -> float:
        return min((t.loss for t in self.trials if t.loss is not None), default=math.inf)

    def time_to(self, target: float) -> float:
        """Simulated time when the best loss first reached ``target`` (inf if never)."""
        hits = [t.end for t in self.trials if t.loss is not None and t.loss <= target]
        return min(hits, default=math.inf)

    def metrics(self, target: float) -> dict[str, float]:
        busy = sum(t.duration for t in self.trials)
        work = sum(t.cost for t in self.trials)
        hours = self.makespan / 3600
        return {
            "trials": len(self.trials),
            "makespan_s": self.makespan,
            "trials_per_hour": len(self.trials) / hours,
            "work_per_hour": work / hours,
            "utilisation": busy / (self.n_workers * self.makespan),
            "time_to_target_s": self.time_to(target),
            "best_loss": self.best_loss(),
        }


Lookup = Callable[[str, Mapping[str, Any]], dict[str, Any]]


def _lpt(trials: list[SimTrial]) -> list[SimTrial]:
    return sorted(trials, key=lambda t: -t.predicted)


def simulate_shadho(
    spec: SearchSpec, pool: EvaluatedPool, rounds: int, seed: int, oracle: bool = False
) -> SimResult:
    """SHADHO: plan_round decides sub-spaces and classes; LPT inside each class.

    ``oracle=True`` gives the planner every trial's true cost instead of its prediction: not
    achievable, an upper bound showing how much cost prediction leaves on the table.
    """
    cluster = Cluster(by_speed(spec.classes))
    spec = _with_seed(spec, seed)
    history: list[dict[str, Any]] = []
    previous = None
    trials: list[SimTrial] = []
    ends, now = [], 0.0
    for r in range(rounds):
        truth = (lambda sub, vals: pool.lookup(sub, vals)["cost"]) if oracle else None
        plan = plan_round(spec, r, history, previous, cost_predictor=truth)
        previous = plan["ranking"]
        queues: dict[str, list[SimTrial]] = {c.name: [] for c in cluster.classes}
        made = []
        for t in plan["trials"]:
            hit = pool.lookup(t["subspace"], t["vals"])
            sim = SimTrial(
                t["subspace"], t["vals"], hit["cost"], hit["loss"], t["predicted_cost"], round=r
            )
            queues[t["hw_class"]].append(sim)
            made.append((t, sim))
        now = run_round(cluster, {c: _lpt(q) for c, q in queues.items()}, now)
        ends.append(now)
        results = [
            {
                **t,
                "status": "ok" if s.loss is not None else "fail",
                "loss": s.loss,
                "duration_s": s.duration,
            }
            for t, s in made
        ]
        history = merge_round(history, plan, results)
        trials += [s for _, s in made]
    label = "shadho_oracle_costs" if oracle else "shadho"
    return SimResult(label, trials, ends, len(cluster.speeds), cluster.speeds)


def _with_seed(spec: SearchSpec, seed: int) -> SearchSpec:
    return replace(spec, seed=seed)


def _random_class_queues(
    cluster: Cluster, trials: list[SimTrial], rng: np.random.Generator, pull: bool
) -> dict[str, list[SimTrial]]:
    if pull:
        return {"*": trials}
    queues: dict[str, list[SimTrial]] = {c.name: [] for c in cluster.classes}
    for t in trials:
        queues[cluster.names[int(rng.integers(len(cluster.names)))]].append(t)
    return queues


def simulate_agnostic(
    spec: SearchSpec, pool: EvaluatedPool, rounds: int, seed: int, pull: bool = False
) -> SimResult:
    """Hardware-oblivious: same per-sub-space TPE, sub-spaces uniform, random placement."""
    cluster = Cluster(by_speed(spec.classes))
    rng = np.random.default_rng([seed, 1])
    names = list(spec.subspaces)
    records: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
    trials: list[SimTrial] = []
    ends, now = [], 0.0
    for r in range(rounds):
        picks = rng.choice(len(names), size=spec.trials_per_round)
        made = []
        for i, name in enumerate(names):
            k = int((picks == i).sum())
            if not k:
                continue
            opt = SubspaceOptimizer(spec.subspaces[name].space, records[name], spec.n_startup_jobs)
            for s in opt.ask(k, int(rng.integers(2**31 - 1))):
                hit = pool.lookup(name, s.vals)
                made.append(
                    (name, s.tid, SimTrial(name, s.vals, hit["cost"], hit["loss"], round=r))
                )
        order = rng.permutation(len(made))
        made = [made[i] for i in order]
        now = run_round(
            cluster, _random_class_queues(cluster, [m[2] for m in made], rng, pull), now
        )
        ends.append(now)
        for name, tid, sim in made:
            records[name].append(
                {
                    "tid": tid,
                    "vals": sim.vals,
                    "loss": sim.loss,
                    "status": "ok" if sim.loss is not None else "fail",
                }
            )
        trials += [m[2] for m in made]
    label = "agnostic_pull" if pull else "agnostic"
    return SimResult(label, trials, ends, len(cluster.speeds), cluster.speeds)


def replay_agnostic(spec: SearchSpec, result: SimResult, seed: int) -> SimResult:
    """``result``'s own trials, round by round, placed as ``agnostic`` places them (random
    class, weighted by worker count; earliest-free worker in a random order).

    The same trials, the same rounds: only the placement differs, so the ratio of the two
    makespans is the gain of hardware-aware placement alone, free of the sub-space mix (which
    changes trials per hour: a CNN trial costs several SVM fits).
    """
    cluster = Cluster(by_speed(spec.classes))
    rng = np.random.default_rng([seed, 3])
    trials: list[SimTrial] = []
    ends, now = [], 0.0
    for r in range(len(result.round_ends)):
        # Copies: run_round sets their worker, duration and end anew.
        batch = [replace(t) for t in result.trials if t.round == r]
        batch = [batch[i] for i in rng.permutation(len(batch))]
        now = run_round(cluster, _random_class_queues(cluster, batch, rng, False), now)
        ends.append(now)
        trials += batch
    return SimResult("agnostic_same_trials", trials, ends, len(cluster.speeds), cluster.speeds)


def joint_space(options: Mapping[str, Any]) -> Any:
    """The whole tree as one hyperopt space: an ``hp.choice`` over the sub-spaces, each option
    a dict with its sub-space's name under ``__subspace__`` (labels must be unique across the
    options: build them with distinct label prefixes)."""
    return hp.choice("__subspace__", [{"__subspace__": n, "space": s} for n, s in options.items()])


def joint_space_from_config(
    options: Mapping[str, Any],
) -> tuple[Any, Callable[[dict[str, Any]], tuple[str, dict[str, Any]]]]:
    """Plain TPE's view of an exclusive choice given in config form (option name -> sub-space):
    the whole tree as one :func:`joint_space`, and a function turning the joint TPE's values
    back into ``(sub-space, values under the sub-space's own labels)``.

    Each option's labels are prefixed with its name (``cnn.lr``), so two options may share a
    parameter name (every SVM kernel has ``C``) and still be separate dimensions, as they are
    for SHADHO's per-sub-space optimisers.
    """
    spaces = {n: space_from_config(cfg, f"space.{n}", n) for n, cfg in options.items()}
    names = list(spaces)

    def to_subspace_vals(vals: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        name = names[int(vals["__subspace__"])]
        prefix = f"{name}."
        return name, {k[len(prefix) :]: v for k, v in vals.items() if k.startswith(prefix)}

    return joint_space(spaces), to_subspace_vals


def simulate_joint_tpe(
    spec: SearchSpec,
    joint: Any,
    to_subspace_vals: Callable[[dict[str, Any]], tuple[str, dict[str, Any]]],
    pool: EvaluatedPool,
    rounds: int,
    seed: int,
) -> SimResult:
    """Plain hyperopt TPE over the whole space; random placement like ``agnostic``."""
    cluster = Cluster(by_speed(spec.classes))
    rng = np.random.default_rng([seed, 2])
    n_startup = spec.n_startup_jobs * len(spec.subspaces)
    records: list[dict[str, Any]] = []
    trials: list[SimTrial] = []
    ends, now = [], 0.0
    for r in range(rounds):
        opt = SubspaceOptimizer(joint, records, n_startup)
        made = []
        for s in opt.ask(spec.trials_per_round, int(rng.integers(2**31 - 1))):
            name, vals = to_subspace_vals(s.vals)
            hit = pool.lookup(name, vals)
            made.append((s, SimTrial(name, vals, hit["cost"], hit["loss"], round=r)))
        now = run_round(
            cluster, _random_class_queues(cluster, [m[1] for m in made], rng, False), now
        )
        ends.append(now)
        for s, sim in made:
            records.append(
                {
                    "tid": s.tid,
                    "vals": s.vals,
                    "loss": sim.loss,
                    "status": "ok" if sim.loss is not None else "fail",
                }
            )
        trials += [m[1] for m in made]
    return SimResult("tpe", trials, ends, len(cluster.speeds), cluster.speeds)
