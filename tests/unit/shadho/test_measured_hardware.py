"""Measured hardware (issue 16 part 2): each class's speed per sub-space learned from observed
durations, declared speeds as priors; a class slower than declared is detected and the plan
adapts. Duration histories are generated (hypothesis), from true speeds unknown to the planner."""

import math

import numpy as np
from hyperopt import hp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import snakemake_shadho as shadho
from snakemake_shadho import HardwareClass
from tests.conftest import examples

CLASSES = {
    "fast": HardwareClass("fast", count=1, speed=2.0),
    "slow": HardwareClass("slow", count=1, speed=1.0),
}
SUBSPACES = ["a", "b", "c"]
BASE = {"a": 1.0, "b": 4.0, "c": 16.0}


def history(true_speed, rng, n_per_cell=2, confound=True, noise=0.2):
    """Records of trials of every sub-space on both classes. A trial's reference cost grows with
    its coordinate x (x = 1 costs e^2 times x = 0); with ``confound`` the costlier trials of
    every sub-space mostly ran on 'fast' (what longest-first placement does with imperfect cost
    predictions: a trial goes to 'fast' when its noisy predicted x is above the median)."""
    records = []
    for s in SUBSPACES:
        xs = rng.random(2 * n_per_cell)
        guess = xs + rng.uniform(-0.3, 0.3, len(xs))
        for i, x in enumerate(xs):
            above = guess[i] >= np.median(guess)
            cls = ("fast" if above else "slow") if confound else ("fast", "slow")[i % 2]
            cost = BASE[s] * math.exp(2 * x) * rng.lognormal(0.0, noise)
            records.append(
                {
                    "subspace": s,
                    "hw_class": cls,
                    "status": "ok",
                    "loss": 0.1,
                    "x": float(x),
                    "duration_s": cost / true_speed[cls],
                }
            )
    return records


def estimate(records, **kw):
    return shadho.estimate_speeds(CLASSES, SUBSPACES, records, features=lambda r: [r["x"]], **kw)


@settings(max_examples=examples(40), deadline=None)
@given(
    slowdown=st.floats(5.0, 50.0),
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 4),
)
def test_a_class_slower_than_declared_is_detected(slowdown, seed, n):
    """'fast' is declared twice as fast as 'slow' but really runs ``slowdown`` times slower than
    declared: from one round of each class on each sub-space the estimate ranks it below
    'slow' on every sub-space and flags it; the honest class is not flagged."""
    true = {"fast": 2.0 / slowdown, "slow": 1.0}
    est = estimate(history(true, np.random.default_rng(seed), n_per_cell=n))
    for s in SUBSPACES:
        assert est[("fast", s)].measured < est[("slow", s)].measured
    assert shadho.slower_than_declared(est, CLASSES) == ["fast"]
    measured = shadho.measured_classes(CLASSES, est)
    assert [c.name for c in shadho.by_speed(measured)] == ["slow", "fast"]


def _pooled_ratio(est):
    return shadho.measured_classes(CLASSES, est)["fast"].speed / (
        shadho.measured_classes(CLASSES, est)["slow"].speed
    )


@settings(max_examples=examples(40), deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(3, 5))
def test_honest_classes_are_measured_as_declared_despite_costly_trials_on_the_fast_one(seed, n):
    """Durations that match the declarations, with the costly configurations mostly sent to
    'fast' (the bias longest-first placement creates): the cost regression on the configuration
    keeps 'fast' about twice as fast as 'slow' and flags nobody, from the data alone (no prior).

    One history of 3 trials per class and sub-space can mislead: about 1 in 1,700 measures
    'fast' just below 'slow' (which flags it; the lowest ratio in 20,000 seeds was 0.79). So
    each example is ten histories: none far off, their median near the truth, at most two of
    ten flagged (a chance of about 1 in 40 million when one is flagged in 1,700). With one
    history per example the test failed about one run in 200 of the unit tier and one in 25
    at the full example count."""
    ratios, flagged = [], 0
    for child in np.random.SeedSequence(seed).spawn(10):
        records = history({"fast": 2.0, "slow": 1.0}, np.random.default_rng(child), n)
        est = estimate(records, prior_weight=0.0)
        ratios.append(_pooled_ratio(est))
        flagged += shadho.slower_than_declared(est, CLASSES) != []
    assert all(0.5 < r < 8.0 for r in ratios), ratios
    assert 1.1 < float(np.median(ratios)) < 3.5, ratios
    assert flagged <= 2, ratios


def test_the_cost_regression_removes_the_placement_bias():
    """Over 50 generated histories the median measured fast/slow ratio is about the true 2
    with the configuration's coordinates, and below 1 (fast taken for slower) without them."""
    with_x, without = [], []
    for seed in range(50):
        records = history({"fast": 2.0, "slow": 1.0}, np.random.default_rng(seed), 4)
        with_x.append(_pooled_ratio(estimate(records, prior_weight=0.0)))
        plain = shadho.estimate_speeds(CLASSES, SUBSPACES, records, prior_weight=0.0)
        without.append(_pooled_ratio(plain))
    assert 1.7 < np.median(with_x) < 2.3
    assert np.median(without) < 1.0


def test_no_observations_keep_the_declared_speeds_and_a_lone_class_keeps_its_prior():
    est = estimate([])
    assert all(e.measured == e.declared and e.trials == 0 for e in est.values())
    only_slow = [
        r
        for r in history({"fast": 2.0, "slow": 0.1}, np.random.default_rng(0))
        if r["hw_class"] == "slow"
    ]
    est = estimate(only_slow)
    # Nothing to compare with: only relative speeds are identified.
    assert math.isclose(est[("slow", "a")].measured, 1.0, rel_tol=1e-6)


def test_estimates_do_not_depend_on_record_order():
    records = history({"fast": 0.2, "slow": 1.0}, np.random.default_rng(3))
    a, b = estimate(records), estimate(records[::-1])
    assert {k: round(v.measured, 9) for k, v in a.items()} == {
        k: round(v.measured, 9) for k, v in b.items()
    }


def _reference_estimate(records, prior_weight, features, ridge=0.01, sweeps=30):
    """The measured speeds as _speeds' docstring defines them, written plainly: the
    alternating fit with the ridge regression solved from scratch in every sweep (what
    estimate_speeds did before it computed each sub-space's hat matrix once)."""
    obs = sorted(
        (r["hw_class"], r["subspace"], math.log(r["duration_s"]), tuple(features(r)))
        for r in records
    )
    prior = {(c, s): math.log(CLASSES[c].speed_of(s)) for c in CLASSES for s in SUBSPACES}
    lam = dict(prior)
    for _ in range(sweeps):
        gap = {}
        for s in SUBSPACES:
            rows = [(c, y, x) for c, ss, y, x in obs if ss == s]
            if not rows:
                continue
            use_x = len(rows) >= 2 * (len(rows[0][2]) + 1)
            design = np.array([[1.0, *(x if use_x else ())] for _, _, x in rows])
            target = np.array([y + lam[(c, s)] for c, y, _ in rows])
            penalty = np.sqrt(ridge) * np.eye(design.shape[1])[1:]
            coef = np.linalg.lstsq(
                np.vstack([design, penalty]),
                np.concatenate([target, np.zeros(len(penalty))]),
                rcond=None,
            )[0]
            for (c, y, _), f in zip(rows, design @ coef, strict=True):
                gap.setdefault((c, s), []).append(float(f) - y)
        ratio = {}
        for c in CLASSES:
            res = [g - prior[(cc, s)] for (cc, s), gs in gap.items() if cc == c for g in gs]
            ratio[c] = sum(res) / (len(res) + prior_weight)
        for c in CLASSES:
            for s in SUBSPACES:
                gs = gap.get((c, s), [])
                centre = prior[(c, s)] + ratio[c]
                lam[(c, s)] = (prior_weight * centre + sum(gs)) / (prior_weight + len(gs))
    counts = {}
    for c, s, _, _ in obs:
        counts[(c, s)] = counts.get((c, s), 0) + 1
    shift = sum(k * (lam[cell] - prior[cell]) for cell, k in counts.items()) / len(obs)
    return {cell: math.exp(lam[cell] - shift) for cell in lam}


@settings(max_examples=examples(30), deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 5),
    confound=st.booleans(),
    n_features=st.integers(0, 3),
    prior_weight=st.sampled_from([0.0, 1.0, 4.0]),
)
def test_estimates_are_the_alternating_fit_solved_in_every_sweep(
    seed, n, confound, n_features, prior_weight
):
    """estimate_speeds computes each sub-space's fitted values as ``hat @ target``, the hat
    matrix built once per call; the plain definition (a least-squares solve in every sweep)
    gives the same speeds, with slopes and without (too few trials keep a constant)."""
    rng = np.random.default_rng(seed)
    records = history({"fast": 2.0 / rng.uniform(0.5, 8), "slow": 1.0}, rng, n, confound)

    def features(r):
        return [r["x"] ** (k + 1) for k in range(n_features)]

    got = shadho.estimate_speeds(
        CLASSES, SUBSPACES, records, prior_weight=prior_weight, features=features
    )
    want = _reference_estimate(records, prior_weight, features)
    for cell, e in got.items():
        assert math.isclose(e.measured, want[cell], rel_tol=1e-9), (cell, e.measured, want[cell])


def _spec(**settings):
    space = {
        "model": shadho.exclusive(
            {
                "a": {"x": hp.uniform("x", 0, 1)},
                "b": {"x": hp.uniform("x", 0, 1), "y": hp.uniform("y", 0, 1)},
                "c": {"x": hp.uniform("x", 0, 1), "y": hp.uniform("y", 0, 1)},
            }
        )
    }
    hardware = {
        "fast": HardwareClass("fast", count=2, speed=2.0),
        "slow": HardwareClass("slow", count=2, speed=1.0),
    }
    return shadho.make_spec(space, hardware, **{"trials_per_round": 8, "rounds": 6, **settings})


def _run(spec, true_speed, rounds, seed=0):
    """Plan and 'run' rounds: duration = reference cost / the class's true speed."""
    rng = np.random.default_rng(seed)
    history, previous, plans = [], None, []
    for r in range(rounds):
        plan = shadho.plan_round(spec, r, history, previous)
        results = []
        for t in plan["trials"]:
            cost = {"a": 1.0, "b": 3.0, "c": 9.0}[t["subspace"]] * (1 + t["params"]["x"])
            results.append(
                {
                    **t,
                    "status": "ok",
                    "loss": float(t["params"]["x"]),
                    "duration_s": cost / true_speed[t["hw_class"]] * rng.lognormal(0, 0.1),
                }
            )
        history = shadho.merge_round(history, plan, results)
        previous = plan["ranking"]
        plans.append(plan)
    return plans


def _busy(plan, speeds):
    out = dict.fromkeys(speeds, 0.0)
    for t in plan["trials"]:
        out[t["hw_class"]] += t["predicted_cost"] / speeds[t["hw_class"]]
    return out


@settings(max_examples=examples(8), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(slowdown=st.sampled_from([5.0, 10.0, 20.0]), seed=st.integers(0, 1000))
def test_the_plan_adapts_within_two_rounds_to_a_class_slower_than_declared(slowdown, seed):
    """'fast' (declared 2) really runs at 2 / slowdown. Round 0 follows the declarations (the
    top-ranked sub-space on 'fast' only) and runs a sub-space shared by both classes on both
    (a calibration trial); by round 2 the plan flags 'fast', and the windows follow the
    measured speeds: the bottom of the ranking runs on 'fast', now the truly slower class, only
    (the incumbent at the top is served by both classes). With honest durations nothing is
    flagged and the bottom stays on 'slow'."""
    spec = _spec(seed=seed)
    lying = _run(spec, {"fast": 2.0 / slowdown, "slow": 1.0}, 3, seed)
    first = lying[0]
    assert first["ranking"]["lead"] is None
    assert first["ranking"]["order"][0] in first["serving"]["fast"]
    assert first["ranking"]["order"][0] not in first["serving"]["slow"]
    ran = {(t["hw_class"], t["subspace"]) for t in first["trials"]}
    assert any(("fast", s) in ran and ("slow", s) in ran for s in SUBSPACES)
    last = lying[2]
    assert last["slower_than_declared"] == ["fast"]
    bottom = last["ranking"]["order"][-1]
    assert bottom in last["serving"]["fast"] and bottom not in last["serving"]["slow"]
    lead = last["ranking"]["lead"]
    assert lead == last["ranking"]["order"][0]
    assert all(serving[0] == lead for serving in last["serving"].values())
    honest = _run(spec, {"fast": 2.0, "slow": 1.0}, 3, seed)[2]
    assert honest["slower_than_declared"] == []
    bottom = honest["ranking"]["order"][-1]
    assert bottom in honest["serving"]["slow"] and bottom not in honest["serving"]["fast"]


def test_plan_records_the_measured_speeds():
    plans = _run(_spec(), {"fast": 0.2, "slow": 1.0}, 2)
    rows = plans[1]["speeds"]
    assert {(r["hw_class"], r["subspace"]) for r in rows} == {
        (c, s) for c in ("fast", "slow") for s in ("a", "b", "c")
    }
    assert all(r["declared"] == {"fast": 2.0, "slow": 1.0}[r["hw_class"]] for r in rows)


def test_calibration_moves_the_shortest_shared_trial_to_the_class_lacking_it():
    """fast and slow share 'b'; all three 'b' trials were placed on fast and neither class has
    run 'b' before: the shortest moves to slow. With a bridge already in the history, or a
    single 'b' trial, nothing moves."""
    from snakemake_shadho._rounds import _calibrate

    def trials():
        return [
            {"subspace": "b", "tid": i, "hw_class": "fast", "predicted_cost": c}
            for i, c in enumerate([3.0, 1.0, 2.0])
        ] + [{"subspace": "a", "tid": 9, "hw_class": "fast", "predicted_cost": 5.0}]

    serving = {"fast": ["a", "b"], "slow": ["b", "c"]}
    classes = [shadho.HardwareClass("fast", speed=2.0), shadho.HardwareClass("slow")]
    moved = trials()
    _calibrate(moved, serving, [], classes)
    assert [t["hw_class"] for t in moved] == ["fast", "slow", "fast", "fast"]
    bridged = trials()
    history = [{"hw_class": "fast", "subspace": "b"}, {"hw_class": "slow", "subspace": "b"}]
    _calibrate(bridged, serving, history, classes)
    assert [t["hw_class"] for t in bridged] == ["fast"] * 4
    single = trials()[1:2]
    _calibrate(single, serving, [], classes)
    assert single[0]["hw_class"] == "fast"
