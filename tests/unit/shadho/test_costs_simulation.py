"""The per-trial cost model, LPT placement across classes, and the discrete-event simulator's
mechanics (the benchmark's real losses and costs come from bench/shadho.py)."""

import math
from pathlib import Path

import numpy as np
import pytest
from hyperopt import hp

import snakemake_shadho as shadho
from snakemake_shadho import HardwareClass, place_trials
from snakemake_shadho import _simulate as sim
from snakemake_shadho._costmodel import predict_costs

SPACE = {"C": hp.loguniform("C", 0.0, math.log(1000.0))}


def test_predict_costs_from_nearest_trials_in_log_units():
    """Reference cost = duration x class speed; neighbours are found in log units for C."""
    records = [
        {"vals": {"C": 1.0}, "duration_s": 1.0, "hw_class": "slow"},
        {"vals": {"C": 10.0}, "duration_s": 1.0, "hw_class": "fast"},  # speed 2: cost 2
        {"vals": {"C": 100.0}, "duration_s": 10.0, "hw_class": "slow"},
    ]
    speeds = {"fast": 2.0, "slow": 1.0}
    assert predict_costs(SPACE, records, [{"C": 90.0}], speeds, 5.0, k=1) == [10.0]
    assert predict_costs(SPACE, records, [{"C": 40.0}], speeds, 5.0, k=2) == [6.0]
    assert predict_costs(SPACE, [], [{"C": 40.0}], speeds, 5.0) == [5.0]


def test_predict_costs_forest_learns_which_hyperparameter_drives_the_cost(monkeypatch):
    """Cost depends on x only (10 above 0.5, 1 below); y and z are noise that mislead a
    distance. From FOREST_MIN trials the forest tells expensive from cheap where the nearest
    neighbours cannot, and predicts the same twice (planning a round twice must agree)."""
    space = {label: hp.uniform(label, 0, 1) for label in "xyz"}
    rng = np.random.default_rng(0)

    def configs(n):
        return [dict(zip("xyz", map(float, p), strict=True)) for p in rng.random((n, 3))]

    def cost(vals):
        return 10.0 if vals["x"] > 0.5 else 1.0

    records = [{"vals": v, "duration_s": cost(v), "hw_class": "c"} for v in configs(20)]
    queries = configs(50)
    expensive = np.array([cost(q) > 3 for q in queries])
    forest = np.array(predict_costs(space, records, queries, {"c": 1.0}, 5.0))
    assert np.mean((forest > 3) == expensive) >= 0.95
    assert predict_costs(space, records, queries, {"c": 1.0}, 5.0) == list(forest)
    monkeypatch.setattr(shadho._costmodel, "FOREST_MIN", 10**6)
    nearest = np.array(predict_costs(space, records, queries, {"c": 1.0}, 5.0))
    assert np.mean((nearest > 3) == expensive) <= 0.85


def test_place_trials_longest_first_on_earliest_finish_respecting_candidates():
    fast = HardwareClass("fast", count=1, speed=4)
    slow = HardwareClass("slow", count=2, speed=1)
    # 8 -> fast (2.0); 3 -> slow (3.0) vs fast (2.75): fast; 2 -> slow (2.0); 1 -> slow (1.0)
    assert place_trials([1, 8, 3, 2], [["fast", "slow"]] * 4, [fast, slow]) == [
        "slow",
        "fast",
        "fast",
        "slow",
    ]
    # A trial whose sub-space only runs on slow stays there even when it is the longest.
    assert place_trials([8, 1], [["slow"], ["fast", "slow"]], [fast, slow]) == ["slow", "fast"]
    with pytest.raises(ValueError, match="no candidate class"):
        place_trials([1], [["gpu"]], [fast, slow])


def test_place_trials_uses_each_classes_speed_on_the_trials_subspace():
    """gpu: one worker, speed 1 but 4 on 'cnn'; cpu: one worker, speed 2. Two trials of
    predicted cost 4: the CNN ends at 1.0 on gpu (2.0 on cpu) and goes there; the SVM then ends
    at 2.0 on cpu (5.0 on gpu). Blind to the sub-space (no ``subspaces``), the first trial
    would take cpu (2.0 < 4.0) and the second gpu (4.0 ties cpu's 4.0, to the faster-listed)."""
    gpu = HardwareClass("gpu", count=1, speed=1, speed_by_subspace=(("cnn", 4.0),))
    cpu = HardwareClass("cpu", count=1, speed=2)
    both = [["gpu", "cpu"]] * 2
    assert place_trials([4, 4], both, [gpu, cpu], ["cnn", "svm"]) == ["gpu", "cpu"]
    assert place_trials([4, 4], both, [gpu, cpu]) == ["cpu", "gpu"]


def test_simulated_duration_uses_the_speed_on_the_subspace():
    gpu = HardwareClass("gpu", count=1, speed=2, speed_by_subspace=(("cnn", 8.0),))
    cluster = sim.Cluster([gpu])
    cnn, svm = sim.SimTrial("cnn", {}, 8.0, 0.1), sim.SimTrial("svm", {}, 8.0, 0.1)
    assert sim.run_round(cluster, {"gpu": [cnn, svm]}, start=0.0) == 1.0 + 4.0
    assert (cnn.duration, svm.duration) == (1.0, 4.0)


def test_place_trials_equal_predictions_place_the_most_constrained_first():
    """Round 0 predicts equal costs. fast (speed 2) and slow (speed 1), one worker each; the
    third trial may only run on fast. Placed first, it takes fast at 0.5; the others end at
    1.0 (fast) and 1.0 (slow). In list order it would have ended at 1.5, after both others
    took fast's early slots."""
    fast, slow = HardwareClass("fast", count=1, speed=2), HardwareClass("slow", count=1)
    both = ["fast", "slow"]
    assert place_trials([1, 1, 1], [both, both, ["fast"]], [fast, slow]) == [
        "fast",
        "slow",
        "fast",
    ]


def test_plan_places_trials_predicted_expensive_on_the_fast_class():
    """With history showing large C is slow (and the fast class 4 times as fast, as declared),
    a round's large-C trials go to the fast class."""
    spec = shadho.make_spec(
        {"C": hp.loguniform("C", 0.0, math.log(1000.0))},
        {"fast": HardwareClass("fast", count=1, speed=4), "slow": HardwareClass("slow", 4)},
        trials_per_round=10,
        n_startup_jobs=100,
    )
    history = []
    plan = shadho.plan_round(spec, 0, history)
    results = [
        {
            **t,
            "status": "ok",
            "loss": 1.0,
            "duration_s": t["params"]["C"] / 100 / (4 if t["hw_class"] == "fast" else 1),
        }
        for t in plan["trials"]
    ]
    history = shadho.merge_round(history, plan, results)
    plan = shadho.plan_round(spec, 1, history, plan["ranking"])
    by_class = {
        c: [t["predicted_cost"] for t in plan["trials"] if t["hw_class"] == c]
        for c in ("fast", "slow")
    }
    assert max(by_class["fast"]) == max(t["predicted_cost"] for t in plan["trials"])
    assert sum(by_class["fast"]) / 4 == pytest.approx(
        max(sum(by_class["fast"]) / 4, sum(by_class["slow"]) / 4), rel=0.5
    )


def test_run_round_hand_computed():
    """fast (speed 2) runs 4 then 2: ends at 2 and 3; slow runs 1: ends at 1; round ends 3."""
    cluster = sim.Cluster([HardwareClass("fast", count=1, speed=2), HardwareClass("slow")])
    a, b, c = (sim.SimTrial("s", {}, cost, 0.1) for cost in (4.0, 2.0, 1.0))
    end = sim.run_round(cluster, {"fast": [a, b], "slow": [c]}, start=10.0)
    assert (a.end, b.end, c.end, end) == (12.0, 13.0, 11.0, 13.0)
    pulled = [sim.SimTrial("s", {}, cost, 0.1) for cost in (4.0, 2.0, 1.0)]
    # one queue: 4 on fast (ends 2), 2 on slow (ends 2), 1 on fast again (ends 2.5)
    assert sim.run_round(cluster, {"*": pulled}, start=0.0) == 2.5


def _synthetic_pool(spec):
    """A stand-in for the benchmark's table of real evaluations: cost grows with C."""
    entries = {}
    for name, sub in spec.subspaces.items():
        opt = shadho.SubspaceOptimizer(sub.space, n_startup_jobs=10**6)
        rows = []
        for s in opt.ask(40, seed=1):
            c = s.vals["C"]
            rows.append(
                {"vals": s.vals, "loss": abs(math.log10(c) - 1) / 10, "cost": 0.05 + c / 250}
            )
        entries[name] = rows
    return sim.EvaluatedPool(entries, {n: s.space for n, s in spec.subspaces.items()})


def test_strategies_share_budget_and_shadho_balances_rounds():
    """Same budget for every strategy; with costs that depend on C, SHADHO's rounds are
    shorter than random placement's."""
    spec = shadho.load_spec(
        {
            "space": {
                "m": {
                    "exclusive": {
                        "a": {"C": {"loguniform": [1, 1000]}},
                        "b": {"C": {"loguniform": [1, 1000]}, "x": {"uniform": [0, 1]}},
                    }
                }
            },
            "hardware": {"fast": {"count": 2, "speed": 8}, "slow": {"count": 8}},
            "trials_per_round": 20,
            "n_startup_jobs": 3,
        }
    )
    pool = _synthetic_pool(spec)
    results = [
        sim.simulate_shadho(spec, pool, 4, 0),
        sim.simulate_agnostic(spec, pool, 4, 0),
        sim.simulate_agnostic(spec, pool, 4, 0, pull=True),
    ]
    for r in results:
        assert len(r.trials) == 80 and len(r.round_ends) == 4
        m = r.metrics(target=0.01)
        assert 0 < m["utilisation"] <= 1 and m["trials_per_hour"] > 0
    assert results[0].makespan < results[1].makespan
    replayed = sim.replay_agnostic(spec, results[0], 0)
    # The same trials in the same rounds, only placed at random: longer rounds.
    for r in range(4):
        mine = sorted((t.subspace, t.cost) for t in results[0].trials if t.round == r)
        assert mine == sorted((t.subspace, t.cost) for t in replayed.trials if t.round == r)
        assert len(mine) == 20
    assert replayed.makespan > results[0].makespan
    assert all(t.worker >= 0 for t in replayed.trials)


def test_plan_round_accepts_a_cost_predictor():
    """A user-supplied cost model replaces the built-in one; the longest trial goes fast."""
    spec = shadho.make_spec(
        {"C": hp.loguniform("C", 0.0, math.log(1000.0))},
        {"fast": HardwareClass("fast", count=1, speed=4), "slow": HardwareClass("slow", 4)},
        trials_per_round=6,
    )
    plan = shadho.plan_round(spec, 0, [], cost_predictor=lambda sub, vals: vals["C"])
    assert [t["predicted_cost"] for t in plan["trials"]] == [t["vals"]["C"] for t in plan["trials"]]
    longest = max(plan["trials"], key=lambda t: t["predicted_cost"])
    assert longest["hw_class"] == "fast"


def _workflow_options():
    import yaml

    config = Path(__file__).parents[3] / "workflows" / "hpo-digits" / "config" / "config.yaml"
    return yaml.safe_load(config.read_text())["hpo"]["space"]["model"]["exclusive"]


def test_joint_space_maps_values_back_to_each_subspace_including_the_cnn():
    """Plain TPE's joint space over the workflow's options gives back, for every sub-space
    (the CNN's categorical and quantised domains included), exactly that sub-space's labels."""
    options = _workflow_options()
    assert "cnn" in options
    joint, to_vals = sim.joint_space_from_config(options)
    spec = shadho.load_spec({"space": {"model": {"exclusive": options}}, "hardware": {"a": {}}})
    labels = {n: set(shadho.SubspaceOptimizer(s.space).labels) for n, s in spec.subspaces.items()}
    seen = set()
    for s in shadho.SubspaceOptimizer(joint, n_startup_jobs=10**6).ask(60, seed=3):
        name, vals = to_vals(s.vals)
        seen.add(name)
        assert set(vals) == labels[name], (name, vals)
    assert seen == set(options)
