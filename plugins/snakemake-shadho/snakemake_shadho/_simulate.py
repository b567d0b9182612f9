"""A discrete-event simulation of hyperparameter searches on a heterogeneous cluster.

What is real and what is simulated: losses and per-trial costs come from a table of really
evaluated configurations (:class:`EvaluatedPool`; a proposal gets the loss and measured CPU cost
of the nearest evaluated configuration of its sub-space); the cluster is simulated. A trial of
reference cost c occupies a worker of that speed for ``overheads.per_trial_s + c / speed``
seconds (the per-trial overhead is the job's dispatch, start and bookkeeping, which no speed
shortens). Round-based strategies pay ``overheads.per_round_s`` before every round (planning,
merging, Snakemake re-evaluating the DAG after a checkpoint); a round ends when its last trial
ends, and results are told to the optimisers only then. Asynchronous strategies
(:func:`run_async`) pay ``per_round_s`` once, to start, and then every worker that frees pulls
the next trial at once (Work Queue's model): no worker idles while trials remain.

The cluster is the spec's hardware classes, or, where the true hardware differs from what the
spec declares (``hardware=``: say a GPU class whose CNN speed-up is not the declared prior),
those true classes: durations come from them, while SHADHO plans with the spec's declared
speeds as priors and the speeds it measures from the trials' durations.

Strategies, all with the same sub-spaces, trial budget, cluster and overheads:

- ``shadho``: :func:`.plan_round` (ranking, class assignment, load-balanced split) in rounds,
  then inside each class longest-predicted-trial-first onto the earliest-free worker;
- ``shadho_async`` (:func:`simulate_shadho_async`): SHADHO without rounds
  (:class:`.AsyncSearch`): every free worker takes its class's next planned trial;
- ``agnostic``: round barrier, the same per-sub-space TPE, sub-spaces drawn uniformly, each
  trial sent to a random class (weighted by worker count, as a random partition choice would)
  and run there on the earliest-free worker in submission order;
- ``agnostic_async`` (:func:`simulate_agnostic_async`): no rounds; every free worker asks the
  per-sub-space TPE of a uniformly drawn sub-space for one trial, pending trials counted as
  TPE's "constant liar": the asynchronous hardware-agnostic scheduler of the SHADHO paper;
- ``agnostic_same_trials`` (:func:`replay_agnostic`): SHADHO's own trials, round by round,
  placed as ``agnostic`` places them: the gain of placement alone;
- ``tpe``: one hyperopt TPE over the whole space (exclusive choices as an ``hp.choice``), in
  rounds like ``agnostic`` (:func:`simulate_joint_tpe`) or asynchronously
  (:func:`simulate_joint_tpe_async`);
- ``optuna``: Optuna's TPE sampler over the same joint space (define-by-run, the sub-space a
  categorical), asynchronous, with its ``constant_liar`` for running trials
  (:func:`simulate_optuna_async`).

:func:`bootstrap_ci`, :func:`paired_bootstrap_ci` and :func:`noninferiority` are the
statistics the benchmark reports (percentile bootstrap over seeds; order statistics, so an
infinite time to target, never reached, is a valid value).
"""

import heapq
import inspect
import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Optional, Protocol

import numpy as np
from hyperopt import hp

from ._async import AsyncSearch
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
    start: float = 0.0


@dataclass(frozen=True)
class Overheads:
    """Seconds the cluster spends outside the trials (bench/shadho.py measures them on a real
    run of workflows/hpo-digits and records how).

    ``per_trial_s``: added to every trial's time on its worker (dispatch, start, recording);
    ``per_round_s``: paid before every round of a round-based strategy (planning, merging,
    the DAG re-evaluated after a checkpoint), and once, to start, by an asynchronous one.
    """

    per_trial_s: float = 0.0
    per_round_s: float = 0.0


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


def run_round(
    cluster: Cluster,
    queues: Mapping[str, Sequence[SimTrial]],
    start: float,
    per_trial_s: float = 0.0,
) -> float:
    """Run each class's queue in order on its earliest-free worker; return the round's end.

    The key ``"*"`` is a queue every worker pulls from. Every trial holds its worker for
    ``per_trial_s`` on top of its duration.
    """
    end = start
    for cls, queue in queues.items():
        workers = range(len(cluster.speeds)) if cls == "*" else cluster.workers_of(cls)
        free = [(start, w) for w in workers]
        heapq.heapify(free)
        for trial in queue:
            t, w = heapq.heappop(free)
            trial.worker = w
            trial.start = t
            trial.duration = cluster.duration(w, trial)
            trial.end = t + per_trial_s + trial.duration
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
        """Throughput, utilisation (time spent computing trials over workers x makespan:
        overheads are not useful work), time to ``target`` and the best loss."""
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

    def utilisation_by_speed(self) -> dict[str, float]:
        """Busy time over (workers x makespan) for the workers of each speed (key: the speed,
        as text, for JSON): how idle the slow and the fast workers are."""
        out = {}
        for speed in sorted(set(self.speeds), reverse=True):
            workers = {i for i, s in enumerate(self.speeds) if s == speed}
            busy = sum(t.duration for t in self.trials if t.worker in workers)
            out[f"{speed:g}"] = busy / (len(workers) * self.makespan)
        return out


Lookup = Callable[[str, Mapping[str, Any]], dict[str, Any]]


def _lpt(trials: list[SimTrial]) -> list[SimTrial]:
    return sorted(trials, key=lambda t: -t.predicted)


def simulate_shadho(
    spec: SearchSpec,
    pool: EvaluatedPool,
    rounds: int,
    seed: int,
    oracle: bool = False,
    overheads: Overheads = Overheads(),
    hardware: Optional[Mapping[str, HardwareClass]] = None,
) -> SimResult:
    """SHADHO: plan_round decides sub-spaces and classes; LPT inside each class.

    ``oracle=True`` gives the planner every trial's true cost instead of its prediction: not
    achievable, an upper bound showing how much cost prediction leaves on the table.
    """
    cluster = Cluster(by_speed(hardware or spec.classes))
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
        now = run_round(
            cluster,
            {c: _lpt(q) for c, q in queues.items()},
            now + overheads.per_round_s,
            overheads.per_trial_s,
        )
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


def planner_pipelines() -> bool:
    """Whether :func:`.plan_round` can plan a round while earlier ones run (``pending=``)."""
    return "pending" in inspect.signature(plan_round).parameters


def simulate_shadho_pipelined(
    spec: SearchSpec,
    pool: EvaluatedPool,
    rounds: int,
    seed: int,
    depth: int = 2,
    overheads: Overheads = Overheads(),
) -> SimResult:
    """SHADHO without the idle barrier: ``depth`` rounds in flight.

    Rounds ``0..depth-1`` are planned at the start; when round k and every round before it have
    finished, round k is merged into the history and round ``k + depth`` is planned from it,
    the unfinished rounds' trials passed to :func:`.plan_round` as ``pending`` (TPE's constant
    liars); its trials are released ``overheads.per_round_s`` later. Every class has one queue
    (each round's share, longest predicted first, appended in round order); a free worker pulls
    from its class's queue, so a class idles only when it has nothing queued.

    Needs a planner with ``pending=`` (see :func:`planner_pipelines`).
    """
    if not planner_pipelines():
        raise NotImplementedError("plan_round has no pending= here: pipelined rounds need it")
    cluster = Cluster(by_speed(spec.classes))
    spec = _with_seed(spec, seed)
    history: list[dict[str, Any]] = []
    plans: dict[int, dict[str, Any]] = {}
    made: dict[int, list[tuple[dict[str, Any], SimTrial]]] = {}
    left: dict[int, int] = {}
    merged = -1
    queues: dict[str, list[SimTrial]] = {c.name: [] for c in cluster.classes}
    idle: dict[str, list[int]] = {c.name: cluster.workers_of(c.name) for c in cluster.classes}
    events: list[tuple[float, int, str, Any]] = []
    seq = itertools.count()
    trials: list[SimTrial] = []

    def plan(r: int, now: float) -> None:
        pending = [t for k in range(merged + 1, r) for t in plans[k]["trials"]]
        previous = plans[max(plans)]["ranking"] if plans else None
        plans[r] = plan_round(spec, r, history, previous, pending=pending)
        made[r] = []
        for t in plans[r]["trials"]:
            hit = pool.lookup(t["subspace"], t["vals"])
            sim = SimTrial(
                t["subspace"], t["vals"], hit["cost"], hit["loss"], t["predicted_cost"], round=r
            )
            made[r].append((t, sim))
        left[r] = len(made[r])
        heapq.heappush(events, (now + overheads.per_round_s, next(seq), "release", r))

    def dispatch(cls: str, now: float) -> None:
        while idle[cls] and queues[cls]:
            w = idle[cls].pop(0)
            trial = queues[cls].pop(0)
            trial.worker, trial.start = w, now
            trial.duration = cluster.duration(w, trial)
            trial.end = now + overheads.per_trial_s + trial.duration
            trials.append(trial)
            heapq.heappush(events, (trial.end, next(seq), "done", trial))

    now = 0.0
    for r in range(min(depth, rounds)):
        plan(r, now)
        now += overheads.per_round_s  # planned one after another
    while events:
        now, _, kind, item = heapq.heappop(events)
        if kind == "release":
            for t, trial in sorted(made[item], key=lambda m: -m[1].predicted):
                queues[t["hw_class"]].append(trial)
            for cls in queues:
                dispatch(cls, now)
            continue
        trial = item
        left[trial.round] -= 1
        cls = cluster.names[trial.worker]
        idle[cls].append(trial.worker)
        idle[cls].sort()
        while merged + 1 in left and left[merged + 1] == 0:
            k = merged + 1
            results = [
                {
                    **t,
                    "status": "ok" if s.loss is not None else "fail",
                    "loss": s.loss,
                    "duration_s": s.duration,
                }
                for t, s in made[k]
            ]
            history = merge_round(history, plans[k], results)
            merged = k
            if k + depth < rounds:
                plan(k + depth, now)
        dispatch(cls, now)
    ends = [max(t.end for t in trials)]
    return SimResult("shadho_pipelined", trials, ends, len(cluster.speeds), cluster.speeds)


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
    spec: SearchSpec,
    pool: EvaluatedPool,
    rounds: int,
    seed: int,
    pull: bool = False,
    overheads: Overheads = Overheads(),
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
            cluster,
            _random_class_queues(cluster, [m[2] for m in made], rng, pull),
            now + overheads.per_round_s,
            overheads.per_trial_s,
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


def replay_agnostic(
    spec: SearchSpec, result: SimResult, seed: int, overheads: Overheads = Overheads()
) -> SimResult:
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
        now = run_round(
            cluster,
            _random_class_queues(cluster, batch, rng, False),
            now + overheads.per_round_s,
            overheads.per_trial_s,
        )
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
    overheads: Overheads = Overheads(),
) -> SimResult:
    """Plain hyperopt TPE over the whole space in rounds; random placement like ``agnostic``."""
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
            cluster,
            _random_class_queues(cluster, [m[1] for m in made], rng, False),
            now + overheads.per_round_s,
            overheads.per_trial_s,
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


# --- Asynchronous execution: every free worker pulls the next trial (Work Queue's model) ---


class Proposer(Protocol):
    """An asynchronous search: asked for one trial whenever a worker frees, told each result
    when its trial ends (in simulated-time order)."""

    def propose(self, worker_class: str) -> SimTrial: ...

    def tell(self, trial: SimTrial) -> None: ...


def run_async(
    cluster: Cluster,
    budget: int,
    proposer: Proposer,
    label: str,
    overheads: Overheads = Overheads(),
) -> SimResult:
    """Run ``budget`` trials, each proposed the moment a worker is free.

    Before a worker asks, every trial that has ended by then is told (ties: trials end before
    the worker frees). All workers start at ``overheads.per_round_s`` (the search's start-up);
    a worker's next trial starts when its previous one ends, so no worker idles while trials
    remain. Deterministic: ties between free workers go to the lower worker index.
    """
    free = [(overheads.per_round_s, w) for w in range(len(cluster.speeds))]
    heapq.heapify(free)
    running: list[tuple[float, int, SimTrial]] = []
    trials: list[SimTrial] = []
    while len(trials) < budget:
        now, w = heapq.heappop(free)
        while running and running[0][0] <= now:
            proposer.tell(heapq.heappop(running)[2])
        trial = proposer.propose(cluster.names[w])
        trial.worker, trial.start, trial.round = w, now, 0
        trial.duration = cluster.duration(w, trial)
        trial.end = now + overheads.per_trial_s + trial.duration
        heapq.heappush(running, (trial.end, len(trials), trial))
        heapq.heappush(free, (trial.end, w))
        trials.append(trial)
    while running:
        proposer.tell(heapq.heappop(running)[2])
    makespan = max(t.end for t in trials)
    return SimResult(label, trials, [makespan], len(cluster.speeds), cluster.speeds)


class _AgnosticAsync:
    """Per-sub-space TPE, sub-space drawn uniformly; pending trials are TPE's constant liars.

    One optimiser per sub-space lives for the whole search, asked one trial at a time and told
    each result (what a long-running driver does; rebuilding from records gives the same
    proposals, slower)."""

    def __init__(self, spec: SearchSpec, pool: EvaluatedPool, seed: int) -> None:
        self.pool = pool
        self.rng = np.random.default_rng([seed, 4])
        self.names = list(spec.subspaces)
        self.optimizers = {
            n: SubspaceOptimizer(s.space, (), spec.n_startup_jobs)
            for n, s in spec.subspaces.items()
        }
        self.pending: dict[int, tuple[SubspaceOptimizer, int]] = {}

    def propose(self, worker_class: str) -> SimTrial:
        name = self.names[int(self.rng.integers(len(self.names)))]
        opt = self.optimizers[name]
        (s,) = opt.ask(1, int(self.rng.integers(2**31 - 1)))
        hit = self.pool.lookup(name, s.vals)
        trial = SimTrial(name, s.vals, hit["cost"], hit["loss"])
        self.pending[id(trial)] = (opt, s.tid)
        return trial

    def tell(self, trial: SimTrial) -> None:
        opt, tid = self.pending.pop(id(trial))
        opt.tell(tid, trial.loss)


def simulate_agnostic_async(
    spec: SearchSpec,
    pool: EvaluatedPool,
    budget: int,
    seed: int,
    overheads: Overheads = Overheads(),
    hardware: Optional[Mapping[str, HardwareClass]] = None,
) -> SimResult:
    """The asynchronous hardware-agnostic baseline: no rounds, every free worker pulls a trial
    of a uniformly drawn sub-space from that sub-space's TPE (the search SHADHO runs, without
    its ranking and placement)."""
    cluster = Cluster(by_speed(hardware or spec.classes))
    return run_async(cluster, budget, _AgnosticAsync(spec, pool, seed), "agnostic_async", overheads)


class _ShadhoAsync:
    """SHADHO without rounds (:class:`.AsyncSearch`): a free worker of class c takes c's next
    planned trial, a new small round being planned (pending trials as liars) when c's queue is
    empty, or steals the shortest trial it may run from another class's queue."""

    def __init__(self, spec: SearchSpec, pool: Any, seed: int, batch: Optional[int] = None) -> None:
        self.search = AsyncSearch(_with_seed(spec, seed), batch)
        self.pool = pool
        self.pending: dict[int, dict[str, Any]] = {}

    def propose(self, worker_class: str) -> SimTrial:
        t = self.search.next_for(worker_class)
        hit = self.pool.lookup(t["subspace"], t["vals"])
        trial = SimTrial(t["subspace"], t["vals"], hit["cost"], hit["loss"], t["predicted_cost"])
        self.pending[id(trial)] = t
        return trial

    def tell(self, trial: SimTrial) -> None:
        self.search.tell(self.pending.pop(id(trial)), trial.loss, trial.duration)


def simulate_shadho_async(
    spec: SearchSpec,
    pool: EvaluatedPool,
    budget: int,
    seed: int,
    overheads: Overheads = Overheads(),
    batch: Optional[int] = None,
    hardware: Optional[Mapping[str, HardwareClass]] = None,
) -> SimResult:
    """SHADHO asynchronously (:class:`_ShadhoAsync`): the same start-up and per-trial overheads
    as the asynchronous baselines, no rounds, no barrier."""
    cluster = Cluster(by_speed(hardware or spec.classes))
    proposer = _ShadhoAsync(spec, pool, seed, batch)
    return run_async(cluster, budget, proposer, "shadho_async", overheads)


class _JointTPEAsync:
    def __init__(
        self,
        joint: Any,
        to_subspace_vals: Callable[[dict[str, Any]], tuple[str, dict[str, Any]]],
        pool: EvaluatedPool,
        n_startup: int,
        seed: int,
    ) -> None:
        self.to_vals, self.pool = to_subspace_vals, pool
        self.optimizer = SubspaceOptimizer(joint, (), n_startup)
        self.rng = np.random.default_rng([seed, 5])
        self.pending: dict[int, int] = {}

    def propose(self, worker_class: str) -> SimTrial:
        (s,) = self.optimizer.ask(1, int(self.rng.integers(2**31 - 1)))
        name, vals = self.to_vals(s.vals)
        hit = self.pool.lookup(name, vals)
        trial = SimTrial(name, vals, hit["cost"], hit["loss"])
        self.pending[id(trial)] = s.tid
        return trial

    def tell(self, trial: SimTrial) -> None:
        self.optimizer.tell(self.pending.pop(id(trial)), trial.loss)


def simulate_joint_tpe_async(
    spec: SearchSpec,
    joint: Any,
    to_subspace_vals: Callable[[dict[str, Any]], tuple[str, dict[str, Any]]],
    pool: EvaluatedPool,
    budget: int,
    seed: int,
    overheads: Overheads = Overheads(),
    hardware: Optional[Mapping[str, HardwareClass]] = None,
) -> SimResult:
    """Plain hyperopt TPE over the whole space, asked one trial whenever a worker frees (as
    hyperopt's own parallel back-ends do), pending trials as constant liars."""
    cluster = Cluster(by_speed(hardware or spec.classes))
    n_startup = spec.n_startup_jobs * len(spec.subspaces)
    proposer = _JointTPEAsync(joint, to_subspace_vals, pool, n_startup, seed)
    return run_async(cluster, budget, proposer, "tpe_async", overheads)


OptunaDomain = tuple[str, tuple[Any, ...]]


def optuna_domains(options: Mapping[str, Any]) -> dict[str, dict[str, OptunaDomain]]:
    """Per option (sub-space) of an exclusive choice in config form, each label's domain as
    Optuna will sample it, producing the values hyperopt records for that label (the value
    itself; the index for a ``choice``), so both optimisers' proposals look up the same pool.

    Raises ValueError for a domain Optuna has no equivalent for here (``normal``) or a nested
    option (the benchmark's spaces are flat)."""
    out: dict[str, dict[str, OptunaDomain]] = {}
    for name, option in options.items():
        labels: dict[str, OptunaDomain] = {}
        for label, node in option.items():
            if not isinstance(node, Mapping):
                continue  # a constant (the SVM's kernel)
            if len(node) != 1:
                raise ValueError(f"{name}.{label}: nested options are not supported")
            ((kind, args),) = node.items()
            if kind == "uniform":
                labels[label] = ("float", (float(args[0]), float(args[1]), False, None))
            elif kind == "loguniform":
                labels[label] = ("float", (float(args[0]), float(args[1]), True, None))
            elif kind == "quniform":
                labels[label] = ("float", (float(args[0]), float(args[1]), False, float(args[2])))
            elif kind == "randint":
                labels[label] = ("int", (int(args[0]), int(args[1]) - 1))
            elif kind == "choice":
                labels[label] = ("index", (len(args),))
            else:
                raise ValueError(f"{name}.{label}: no Optuna equivalent for {kind!r}")
        out[str(name)] = labels
    return out


class _OptunaAsync:
    def __init__(
        self,
        domains: dict[str, dict[str, OptunaDomain]],
        pool: EvaluatedPool,
        seed: int,
        n_startup: Optional[int],
    ) -> None:
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        kwargs: dict[str, Any] = {"seed": seed, "constant_liar": True}
        if n_startup is not None:
            kwargs["n_startup_trials"] = n_startup
        self.optuna = optuna
        self.study = optuna.create_study(sampler=optuna.samplers.TPESampler(**kwargs))
        self.domains, self.pool = domains, pool
        self.names = list(domains)
        self.pending: dict[int, Any] = {}

    def propose(self, worker_class: str) -> SimTrial:
        t = self.study.ask()
        name = t.suggest_categorical("__subspace__", self.names)
        vals: dict[str, Any] = {}
        for label, (kind, args) in self.domains[name].items():
            key = f"{name}.{label}"
            if kind == "float":
                low, high, log, step = args
                vals[label] = t.suggest_float(key, low, high, log=log, step=step)
            elif kind == "int":
                vals[label] = t.suggest_int(key, *args)
            else:
                vals[label] = t.suggest_categorical(key, list(range(args[0])))
        hit = self.pool.lookup(name, vals)
        trial = SimTrial(name, vals, hit["cost"], hit["loss"])
        self.pending[id(trial)] = t
        return trial

    def tell(self, trial: SimTrial) -> None:
        t = self.pending.pop(id(trial))
        if trial.loss is None:
            self.study.tell(t, state=self.optuna.trial.TrialState.FAIL)
        else:
            self.study.tell(t, float(trial.loss))


def simulate_optuna_async(
    spec: SearchSpec,
    options: Mapping[str, Any],
    pool: EvaluatedPool,
    budget: int,
    seed: int,
    overheads: Overheads = Overheads(),
    n_startup: Optional[int] = None,
    hardware: Optional[Mapping[str, HardwareClass]] = None,
) -> SimResult:
    """Optuna's TPE sampler over the joint space (``options``: the exclusive choice in config
    form), asked whenever a worker frees, ``constant_liar=True`` (Optuna's advice for parallel
    workers); ``n_startup`` random trials (Optuna's default, 10, when None)."""
    cluster = Cluster(by_speed(hardware or spec.classes))
    proposer = _OptunaAsync(optuna_domains(options), pool, seed, n_startup)
    return run_async(cluster, budget, proposer, "optuna_async", overheads)


def overheads_from_records(history: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Per-trial and per-round overheads of a real round-based run, from its trial records'
    wall-clock stamps (``started``, ``finished``, ``round``, ``hw_class``).

    Per trial: the median gap between a trial's end and the next trial's start on the same
    class inside a round (each class running one trial at a time: the job's dispatch, start and
    recording). Per round: the median gap between a round's last end and the next round's first
    start, less the per-trial gap (the simulator adds both before a round's first trial).
    """
    gaps: list[float] = []
    rounds = sorted({int(r["round"]) for r in history})
    classes = sorted({str(r["hw_class"]) for r in history})
    for rnd in rounds:
        for cls in classes:
            mine = sorted(
                (r for r in history if r["round"] == rnd and r["hw_class"] == cls),
                key=lambda r: float(r["started"]),
            )
            gaps += [
                float(b["started"]) - float(a["finished"]) for a, b in itertools.pairwise(mine)
            ]
    between = []
    for a, b in itertools.pairwise(rounds):
        last = max(float(r["finished"]) for r in history if r["round"] == a)
        first = min(float(r["started"]) for r in history if r["round"] == b)
        between.append(first - last)
    per_trial = float(np.median(gaps)) if gaps else 0.0
    per_round = max(0.0, float(np.median(between)) - per_trial) if between else 0.0
    return {
        "per_trial_s": round(per_trial, 3),
        "per_round_s": round(per_round, 3),
        "per_trial_gaps_s": [round(g, 3) for g in gaps],
        "between_rounds_s": [round(g, 3) for g in between],
    }


# --- Statistics over seeds ---


def _order_stat_quantile(sorted_values: np.ndarray, q: float) -> float:
    """The ``q`` quantile as an order statistic (no interpolation: valid with infinities)."""
    n = len(sorted_values)
    return float(sorted_values[min(n - 1, max(0, math.ceil(q * n) - 1))])


def median_of(values: "Sequence[float] | np.ndarray") -> float:
    """The median as an order statistic (the lower middle value for an even count), so a
    median of times to target is infinite exactly when at least half the seeds never got there."""
    return _order_stat_quantile(np.sort(np.asarray(values, dtype=float)), 0.5)


def bootstrap_ci(
    values: Sequence[float],
    stat: "Callable[[np.ndarray], float]" = median_of,
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``stat`` over ``values`` (resampling seeds)."""
    x = np.asarray(values, dtype=float)
    rng = np.random.default_rng(seed)
    boots = np.sort([stat(x[rng.integers(len(x), size=len(x))]) for _ in range(n_boot)])
    alpha = (1 - level) / 2
    return _order_stat_quantile(boots, alpha), _order_stat_quantile(boots, 1 - alpha)


def paired_bootstrap_ci(
    a: Sequence[float],
    b: Sequence[float],
    stat: Callable[[np.ndarray, np.ndarray], float],
    n_boot: int = 2000,
    level: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``stat(a, b)``, resampling seeds as pairs."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(x) != len(y):
        raise ValueError("paired samples differ in length")
    rng = np.random.default_rng(seed)
    boots = []
    for _ in range(n_boot):
        idx = rng.integers(len(x), size=len(x))
        boots.append(stat(x[idx], y[idx]))
    finite = np.sort([v for v in boots if not math.isnan(v)])
    if not len(finite):
        return math.nan, math.nan
    alpha = (1 - level) / 2
    return _order_stat_quantile(finite, alpha), _order_stat_quantile(finite, 1 - alpha)


def ratio_of_medians(a: np.ndarray, b: np.ndarray) -> float:
    """median(a) / median(b); nan when either median is infinite (never reached)."""
    ma, mb = median_of(a), median_of(b)
    return ma / mb if math.isfinite(ma) and math.isfinite(mb) and mb > 0 else math.nan


def noninferiority(
    a: Sequence[float], b: Sequence[float], margin: float, level: float = 0.95, seed: int = 0
) -> dict[str, Any]:
    """Is ``a`` (losses, lower is better) not worse than ``b`` by more than ``margin``?

    Paired over seeds: the one-sided upper ``level`` bootstrap bound of the mean difference
    a - b must lie below ``margin``; also the one-sided Wilcoxon signed-rank p-value of "a is
    worse than b" (no margin), and how often a is better, equal or worse.
    """
    from scipy.stats import wilcoxon

    d = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    _, upper = paired_bootstrap_ci(
        a, b, lambda x, y: float(np.mean(x - y)), level=2 * level - 1, seed=seed
    )
    p = float(wilcoxon(d, alternative="greater").pvalue) if np.any(d != 0) else 1.0
    return {
        "mean_difference": float(np.mean(d)),
        "median_difference": float(np.median(d)),
        "upper_bound_mean_difference": upper,
        "level": level,
        "margin": margin,
        "not_worse": bool(upper <= margin),
        "wilcoxon_p_worse": p,
        "better_equal_worse": [int((d < 0).sum()), int((d == 0).sum()), int((d > 0).sum())],
    }
