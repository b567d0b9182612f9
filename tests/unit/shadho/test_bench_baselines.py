"""The benchmark's baselines and statistics (snakemake_shadho._simulate, used by bench/shadho.py):
asynchronous execution, overheads, Optuna's view of the space, bootstrap intervals and the
non-inferiority test. Pure: simulated clusters, synthetic or tiny pools, no processes."""

import functools
import itertools
import math
from pathlib import Path

import numpy as np
import pytest

import snakemake_shadho as shadho
from snakemake_shadho import HardwareClass
from snakemake_shadho import _simulate as sim


def _options():
    import yaml

    config = Path(__file__).parents[3] / "workflows" / "hpo-digits" / "config" / "config.yaml"
    return yaml.safe_load(config.read_text())["hpo"]["space"]["model"]["exclusive"]


def _spec(options, fast=2, slow=6, speed=4.0):
    return shadho.load_spec(
        {
            "space": {"model": {"exclusive": options}},
            "hardware": {"fast": {"count": fast, "speed": speed}, "slow": {"count": slow}},
            "trials_per_round": fast + slow,
            "rerank_every": fast + slow,
            "n_startup_jobs": 3,
        }
    )


@functools.cache
def _drawn(name):
    """The 25 configurations of sub-space ``name`` that _pool evaluates (hyperopt's random
    draws, seed 7): the same in every test (every spec has the config's sub-spaces), drawn
    once per session; callers get copies."""
    sub = _spec(_options()).subspaces[name]
    drawn = shadho.SubspaceOptimizer(sub.space, n_startup_jobs=10**6).ask(25, 7)
    return tuple(tuple(s.vals.items()) for s in drawn)


def _pool(spec):
    """Costs vary 10x within and across sub-spaces (the CNN costs most); losses vary."""
    entries = {}
    for k, name in enumerate(spec.subspaces):
        rows = []
        for i, vals in enumerate(_drawn(name)):
            cost = (0.2 + (i % 5)) * (4.0 if name == "cnn" else 1.0 + k / 4)
            rows.append({"vals": dict(vals), "loss": 0.02 + ((i * 7 + k) % 11) / 100, "cost": cost})
        entries[name] = rows
    return sim.EvaluatedPool(entries, {n: s.space for n, s in spec.subspaces.items()})


class _Fixed:
    """A proposer handing out trials of given costs, recording what it was told and when."""

    def __init__(self, costs):
        self.costs = list(costs)
        self.told: list[sim.SimTrial] = []
        self.asked_with_told: list[int] = []

    def propose(self, worker_class):
        self.asked_with_told.append(len(self.told))
        cost = self.costs.pop(0)
        return sim.SimTrial("s", {"i": len(self.costs)}, cost, cost / 10)

    def tell(self, trial):
        self.told.append(trial)


def test_run_async_hand_computed_with_overheads():
    """fast (speed 2) and slow (speed 1), one worker each; 0.5 s per trial, 1 s to start.
    Costs 4, 2, 2, 1: fast runs 4 (1.0..3.5), slow 2 (1.0..3.5); at 3.5 fast (lower index)
    takes 2 (3.5..5.0), slow takes 1 (3.5..5.0). Both first results are told before the third
    trial is proposed."""
    cluster = sim.Cluster([HardwareClass("fast", speed=2), HardwareClass("slow")])
    proposer = _Fixed([4.0, 2.0, 2.0, 1.0])
    result = sim.run_async(cluster, 4, proposer, "x", sim.Overheads(0.5, 1.0))
    got = [(t.worker, t.start, t.end) for t in result.trials]
    assert got == [(0, 1.0, 3.5), (1, 1.0, 3.5), (0, 3.5, 5.0), (1, 3.5, 5.0)]
    assert proposer.asked_with_told == [0, 0, 2, 2]
    assert len(proposer.told) == 4 and result.makespan == 5.0


def test_async_baseline_never_leaves_a_worker_idle_while_trials_remain():
    """Every worker's trials run back to back from the start until the last trial is handed
    out: no gap on any worker before that moment."""
    spec = _spec(_options())
    result = sim.simulate_agnostic_async(
        spec, _pool(spec), 60, seed=3, overheads=sim.Overheads(0.3, 2.0)
    )
    assert len(result.trials) == 60
    last_issue = max(t.start for t in result.trials)
    for w in range(len(result.speeds)):
        mine = sorted((t for t in result.trials if t.worker == w), key=lambda t: t.start)
        assert mine and mine[0].start == 2.0
        for a, b in itertools.pairwise(mine):
            assert b.start == pytest.approx(a.end)
        # Idle only once nothing is left to hand out.
        assert mine[-1].end >= last_issue
    for t in result.trials:
        assert t.end - t.start == pytest.approx(0.3 + t.duration)


def test_async_beats_the_barrier_on_the_same_search_when_costs_vary():
    """Same per-sub-space TPE and random placement; without the barrier the cluster never
    waits for a round's longest trial."""
    spec = _spec(_options())
    pool = _pool(spec)
    barrier = sim.simulate_agnostic(spec, pool, 6, seed=1)
    pulled = sim.simulate_agnostic_async(spec, pool, 48, seed=1)
    assert len(barrier.trials) == len(pulled.trials) == 48
    assert pulled.metrics(0.0)["utilisation"] > barrier.metrics(0.0)["utilisation"]
    assert pulled.makespan < barrier.makespan


@pytest.mark.parametrize("strategy", ["agnostic_async", "tpe_async", "optuna_async", "shadho"])
def test_same_seed_same_result_other_seed_other_search(strategy):
    """16 trials (SHADHO: two rounds of 8): every strategy gets past its random start-up
    trials (3 per TPE, 5 for Optuna; SHADHO's top sub-spaces get 7 and 4), so the seed reaches
    the modelled proposals too."""
    options = _options()
    spec = _spec(options)
    pool = _pool(spec)
    joint, to_vals = sim.joint_space_from_config(options)
    ov = sim.Overheads(0.2, 1.0)

    def run(seed):
        if strategy == "agnostic_async":
            r = sim.simulate_agnostic_async(spec, pool, 16, seed, ov)
        elif strategy == "tpe_async":
            r = sim.simulate_joint_tpe_async(spec, joint, to_vals, pool, 16, seed, ov)
        elif strategy == "optuna_async":
            r = sim.simulate_optuna_async(spec, options, pool, 16, seed, ov, n_startup=5)
        else:
            r = sim.simulate_shadho(spec, pool, 2, seed, overheads=ov)
        return [(t.subspace, sorted(t.vals.items()), t.worker, round(t.end, 9)) for t in r.trials]

    first = run(0)
    assert len(first) == 16
    assert run(0) == first
    assert run(1) != first


def test_round_strategies_pay_the_round_overhead_before_every_round():
    spec = _spec(_options())
    pool = _pool(spec)
    plain = sim.simulate_shadho(spec, pool, 3, 0)
    paid = sim.simulate_shadho(spec, pool, 3, 0, overheads=sim.Overheads(0.0, 5.0))
    # Same trials (durations are the same, so the same plans), each round 5 s later.
    assert [t.cost for t in paid.trials] == [t.cost for t in plain.trials]
    assert paid.round_ends == pytest.approx(
        [e + 5.0 * (i + 1) for i, e in enumerate(plain.round_ends)]
    )
    barrier = sim.simulate_agnostic(spec, pool, 3, 0, overheads=sim.Overheads(0.5, 0.0))
    starts = {r: min(t.start for t in barrier.trials if t.round == r) for r in range(3)}
    assert starts[0] == 0.0
    assert starts[1] == barrier.round_ends[0] and starts[2] == barrier.round_ends[1]
    assert all(t.end - t.start == pytest.approx(0.5 + t.duration) for t in barrier.trials)


def test_optuna_proposals_use_hyperopts_encoding_of_every_subspace():
    """Optuna's values are what hyperopt records for the same labels (the index of a choice,
    randint's value in [low, high)), so both look up the same evaluated pool."""
    options = _options()
    spec = _spec(options)
    domains = sim.optuna_domains(options)
    assert domains["cnn"]["channels"] == ("index", (3,))
    assert domains["svm_poly"]["degree"] == ("int", (2, 5))
    result = sim.simulate_optuna_async(spec, options, _pool(spec), 40, 0, n_startup=10)
    labels = {n: set(shadho.SubspaceOptimizer(s.space).labels) for n, s in spec.subspaces.items()}
    seen = set()
    for t in result.trials:
        seen.add(t.subspace)
        assert set(t.vals) == labels[t.subspace]
        if t.subspace == "cnn":
            assert t.vals["channels"] in (0, 1, 2) and 2 <= t.vals["epochs"] <= 8
        if t.subspace == "svm_poly":
            assert 2 <= t.vals["degree"] <= 5
    assert len(seen) >= 3
    with pytest.raises(ValueError, match="no Optuna equivalent"):
        sim.optuna_domains({"a": {"x": {"normal": [0, 1]}}})


def test_utilisation_by_speed_hand_computed():
    cluster = sim.Cluster([HardwareClass("fast", speed=2), HardwareClass("slow", count=2)])
    trials = [sim.SimTrial("s", {}, c, 0.1) for c in (4.0, 1.0, 1.0)]
    end = sim.run_round(cluster, {"*": trials}, 0.0)
    result = sim.SimResult("x", trials, [end], 3, cluster.speeds)
    # fast: 4/2 = 2 s busy of 2; each slow worker 1 s of 2.
    assert result.utilisation_by_speed() == {"2": 1.0, "1": 0.5}


def test_median_and_bootstrap_interval_with_never_reached_seeds():
    assert sim.median_of([3.0, 1.0, 2.0]) == 2.0
    assert sim.median_of([1.0, math.inf, math.inf, 2.0]) == 2.0  # lower middle
    assert sim.median_of([1.0, math.inf, math.inf]) == math.inf
    values = list(np.linspace(1, 10, 20))
    lo, hi = sim.bootstrap_ci(values)
    assert lo <= sim.median_of(values) <= hi and lo < hi
    lo, hi = sim.bootstrap_ci([1.0] * 5 + [math.inf] * 5)
    assert lo == 1.0 and hi == math.inf
    assert sim.bootstrap_ci(values) == sim.bootstrap_ci(values)  # seeded


def test_ratio_of_medians_interval_pairs_the_seeds():
    a = [1.0, 2.0, 3.0, 4.0, 5.0] * 4
    b = [2 * x for x in a]
    lo, hi = sim.paired_bootstrap_ci(a, b, sim.ratio_of_medians)
    assert sim.ratio_of_medians(np.array(a), np.array(b)) == 0.5
    assert lo <= 0.5 <= hi
    assert math.isnan(sim.ratio_of_medians(np.array([math.inf] * 3), np.array([1.0] * 3)))
    with pytest.raises(ValueError, match="differ in length"):
        sim.paired_bootstrap_ci([1.0], [1.0, 2.0], sim.ratio_of_medians)


def test_noninferiority_detects_worse_and_accepts_equal():
    rng = np.random.default_rng(0)
    base = list(0.02 + rng.random(20) / 100)
    same = sim.noninferiority(base, base, margin=0.002)
    assert same["not_worse"] and same["wilcoxon_p_worse"] == 1.0
    assert same["better_equal_worse"] == [0, 20, 0]
    worse = sim.noninferiority([x + 0.01 for x in base], base, margin=0.002)
    assert not worse["not_worse"] and worse["wilcoxon_p_worse"] < 0.001
    slightly = sim.noninferiority([x + 0.0005 for x in base], base, margin=0.002)
    assert slightly["not_worse"] and slightly["mean_difference"] == pytest.approx(0.0005)


def test_overheads_read_from_trial_records():
    """Two classes, two rounds: gaps of 0.2 and 0.4 s between trials on a class inside a
    round (median 0.3); 3.3 s between rounds, less one per-trial gap: 3.0."""
    rec = [
        {"round": 0, "hw_class": "fast", "started": 0.0, "finished": 1.0},
        {"round": 0, "hw_class": "fast", "started": 1.2, "finished": 2.0},
        {"round": 0, "hw_class": "slow", "started": 0.0, "finished": 1.6},
        {"round": 0, "hw_class": "slow", "started": 2.0, "finished": 2.5},
        {"round": 1, "hw_class": "fast", "started": 5.8, "finished": 6.0},
        {"round": 1, "hw_class": "slow", "started": 6.0, "finished": 7.0},
        {"round": 1, "hw_class": "slow", "started": 7.3, "finished": 7.5},
    ]
    found = sim.overheads_from_records(rec)
    assert found["per_trial_s"] == pytest.approx(0.3)
    assert found["per_round_s"] == pytest.approx(3.0)
    assert found["between_rounds_s"] == [3.3]


class _FakePlanner:
    """A stand-in for a planner with ``pending=`` (the i16core API): ``n`` trials a round, the
    i-th on class fast when i is even, costs from the pool; records what was pending."""

    def __init__(self, pool, n):
        self.rows = [(name, r) for name, rows in pool.entries.items() for r in rows]
        self.n = n
        self.pending_seen: dict[int, list[int]] = {}
        self.history_seen: dict[int, int] = {}

    def __call__(self, spec, r, history, previous=None, pending=()):
        self.pending_seen[r] = sorted({t["round"] for t in pending})
        self.history_seen[r] = len(history)
        trials = []
        for i in range(self.n):
            name, row = self.rows[(r * self.n + i) % len(self.rows)]
            trials.append(
                {
                    "trial": f"{name}.{r}_{i}",
                    "round": r,
                    "subspace": name,
                    "tid": r * 1000 + i,
                    "vals": row["vals"],
                    "params": {},
                    "predicted_cost": row["cost"],
                    "hw_class": "fast" if i % 2 == 0 else "slow",
                }
            )
        return {"round": r, "ranking": {"order": [], "at_results": len(history)}, "trials": trials}


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_pipelined_shadho_plans_ahead_with_pending_and_keeps_classes_busy(monkeypatch, depth):
    """depth 1 is the barrier: a round's trials start only after the previous round ended and
    was planned. Deeper pipelines plan round k + depth once round k is merged, the rounds in
    between passed as pending, and a class never idles while its queue holds trials."""
    spec = _spec(_options(), fast=2, slow=4)
    pool = _pool(spec)
    planner = _FakePlanner(pool, 6)
    monkeypatch.setattr(sim, "plan_round", planner)
    ov = sim.Overheads(0.1, 2.0)
    result = sim.simulate_shadho_pipelined(spec, pool, 5, 0, depth=depth, overheads=ov)
    assert len(result.trials) == 30
    assert sorted(planner.pending_seen) == [0, 1, 2, 3, 4]
    for r in range(depth, 5):
        # Planned after rounds 0..r-depth were merged, rounds r-depth+1..r-1 pending.
        assert planner.history_seen[r] == 6 * (r - depth + 1)
        assert planner.pending_seen[r] == list(range(r - depth + 1, r))
    ends = {r: max(t.end for t in result.trials if t.round == r) for r in range(5)}
    starts = {r: min(t.start for t in result.trials if t.round == r) for r in range(5)}
    for r in range(depth, 5):
        assert starts[r] >= ends[r - depth] + 2.0 - 1e-9
    # Round r's trials are queued from its release: planned one after another at the start,
    # later once rounds 0..r-depth have all ended.
    release = {
        r: (r + 1) * 2.0 if r < depth else max(ends[k] for k in range(r - depth + 1)) + 2.0
        for r in range(5)
    }
    for workers in ({0, 1}, {2, 3, 4, 5}):  # fast, slow
        mine = [t for t in result.trials if t.worker in workers]
        assert mine
        for t in mine:
            assert t.start >= release[t.round] - 1e-9
            if t.start > release[t.round] + 1e-9:  # it waited: every worker was busy
                busy = {u.worker for u in mine if u.start < t.start and u.end >= t.start - 1e-9}
                assert busy == workers
    if depth == 1:
        for r in range(1, 5):
            assert starts[r] == pytest.approx(ends[r - 1] + 2.0)


def test_pipelining_shortens_the_search_when_costs_vary(monkeypatch):
    spec = _spec(_options(), fast=2, slow=4)
    pool = _pool(spec)
    monkeypatch.setattr(sim, "plan_round", _FakePlanner(pool, 6))
    ov = sim.Overheads(0.1, 2.0)
    barrier = sim.simulate_shadho_pipelined(spec, pool, 6, 0, depth=1, overheads=ov)
    piped = sim.simulate_shadho_pipelined(spec, pool, 6, 0, depth=2, overheads=ov)
    assert piped.makespan < barrier.makespan
    assert sorted(t.cost for t in piped.trials) == sorted(t.cost for t in barrier.trials)


def test_pipelined_shadho_needs_a_planner_with_pending(monkeypatch):
    spec = _spec(_options())
    monkeypatch.setattr(sim, "plan_round", lambda spec, r, history, previous=None: {})
    with pytest.raises(NotImplementedError, match="pending="):
        sim.simulate_shadho_pipelined(spec, _pool(spec), 2, 0)


@pytest.mark.skipif(not sim.planner_pipelines(), reason="the planner has no pending= yet")
def test_pipelined_depth_one_is_the_barrier_with_the_real_planner():
    """With the real planner, depth 1 plans and runs exactly what the barrier strategy does."""
    spec = _spec(_options())
    pool = _pool(spec)
    ov = sim.Overheads(0.2, 1.5)
    piped = sim.simulate_shadho_pipelined(spec, pool, 3, 0, depth=1, overheads=ov)
    barrier = sim.simulate_shadho(spec, pool, 3, 0, overheads=ov)
    assert piped.makespan == pytest.approx(barrier.makespan)
    key = sorted((t.round, t.subspace, sorted(t.vals.items())) for t in barrier.trials)
    assert sorted((t.round, t.subspace, sorted(t.vals.items())) for t in piped.trials) == key
