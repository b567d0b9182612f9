"""Ranking that earns its trials (issue 16 part 3), pipelined rounds (part 1's planning side) and
missing dependencies (part 5): budget-aware exploration floors, a robust uncertainty term,
proposals that measured durations do not change, pending trials, the requires: check."""

import functools
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import snakemake_shadho as shadho
from snakemake_shadho._cli import main
from tests.conftest import examples

SPACE = {
    "m": {
        "exclusive": {
            "lin": {"C": {"loguniform": [0.01, 100]}},
            "rbf": {"C": {"loguniform": [0.01, 100]}, "g": {"loguniform": [1e-3, 1]}},
            "poly": {
                "C": {"loguniform": [0.01, 100]},
                "g": {"loguniform": [1e-3, 1]},
                "d": {"randint": [2, 5]},
            },
            "sig": {
                "C": {"loguniform": [0.01, 100]},
                "g": {"loguniform": [1e-3, 1]},
                "c0": {"uniform": [-1, 1]},
            },
            "cnn": {"lr": {"loguniform": [1e-3, 0.1]}, "ep": {"quniform": [2, 8, 1]}},
        }
    }
}
HARDWARE = {"fast": {"count": 2, "speed": 2}, "slow": {"count": 2, "speed": 1}}


def _spec(**settings):
    config = {
        "space": SPACE,
        "hardware": HARDWARE,
        "seed": 3,
        "rounds": 6,
        "trials_per_round": 4,
        "n_startup_jobs": 2,
        "rerank_every": 4,
        **settings,
    }
    return shadho.load_spec(config)


def _loss(t):
    p = t["params"]
    return abs(math.log10(p.get("C", p.get("lr", 1.0)))) / 10 + (0.2 if p["m"] == "lin" else 0.0)


def _results(plan, duration):
    return [
        {**t, "status": "ok", "loss": _loss(t), "duration_s": duration(t)} for t in plan["trials"]
    ]


def _search(spec, duration, rounds):
    history, previous, proposed = [], None, []
    for r in range(rounds):
        plan = shadho.plan_round(spec, r, history, previous)
        proposed.append([(t["subspace"], t["tid"], t["vals"]) for t in plan["trials"]])
        history = shadho.merge_round(history, plan, _results(plan, duration))
        previous = plan["ranking"]
    return proposed, history


@functools.cache
def _search_at_one_second():
    """What is proposed when every trial takes 1 s: the same for every example, so searched
    once (each example's own search is compared with it)."""
    return _search(_spec(), lambda t: 1.0, 4)[0]


@settings(max_examples=examples(5), deadline=None)
@given(
    factors=st.dictionaries(
        st.sampled_from(["lin", "rbf", "poly", "sig", "cnn"]), st.floats(0.01, 100.0), min_size=1
    ),
    jitter=st.integers(0, 2**32 - 1),
)
def test_measured_durations_do_not_change_which_trials_are_proposed(factors, jitter):
    """Issue 16: measured durations fed the split, so a seed gave different searches on a
    busy machine. Now any durations (sub-spaces 100x cheaper or dearer, per-trial noise) give
    the same sub-spaces, trial ids and values round after round; only placement may differ."""
    spec = _spec()
    rng = np.random.default_rng(jitter)
    base = _search_at_one_second()
    other, _ = _search(
        spec, lambda t: factors.get(t["subspace"], 1.0) * float(rng.lognormal(0, 1)), 4
    )
    assert other == base


def test_durations_change_the_split_only_when_asked():
    """duration_aware_split: true restores cost-balanced splitting (durations then matter)."""
    spec = _spec(duration_aware_split=True, trials_per_round=8)
    cheap_cnn, _ = _search(spec, lambda t: 0.01 if t["subspace"] == "cnn" else 1.0, 3)
    dear_cnn, _ = _search(spec, lambda t: 100.0 if t["subspace"] == "cnn" else 1.0, 3)
    assert cheap_cnn != dear_cnn


@pytest.mark.parametrize(
    ("budget", "n_sub", "fraction", "min_results", "floor"),
    [(24, 5, 0.25, 3, 1), (40, 5, 0.25, 3, 2), (200, 5, 0.25, 3, 3), (8, 5, 0.25, 3, 1)],
)
def test_exploration_floor_shrinks_with_the_budget(budget, n_sub, fraction, min_results, floor):
    names = ["lin", "rbf", "poly", "sig", "cnn"][:n_sub]
    space = {"m": {"exclusive": {n: SPACE["m"]["exclusive"][n] for n in names}}}
    spec = shadho.load_spec(
        {
            "space": space,
            "hardware": HARDWARE,
            "rounds": budget // 4,
            "trials_per_round": 4,
            "explore_fraction": fraction,
            "min_results": min_results,
        }
    )
    assert spec.explore_floor == floor


def test_24_trials_force_5_not_15_into_exploration():
    """Issue 16: 24 trials over 5 sub-spaces put 15 (3 each) into forced exploration. The floor
    is now 1 each: after 5 forced trials every sub-space is explored and the ranking (with
    TPE inside each sub-space) decides the rest."""
    spec = _spec(rounds=3, trials_per_round=8)
    plan = shadho.plan_round(spec, 0, [])
    history = shadho.merge_round([], plan, _results(plan, lambda t: 1.0))
    assert all(s.explored for s in shadho.compute_stats(spec, history).values())
    assert len({t["subspace"] for t in plan["trials"]}) == 5


@settings(max_examples=examples(50), deadline=None)
@given(
    good=st.lists(st.floats(0.01, 0.05), min_size=5, max_size=30),
    bad=st.floats(0.5, 1.0),
)
def test_one_catastrophic_loss_barely_moves_the_uncertainty(good, bad):
    """Issue 16: the standard error of the losses is inflated by one catastrophic loss (0.9
    among losses near 0.02). The bootstrap spread of the best loss moves by less than 0.01,
    and by less than a tenth of what the standard error moves (the worst loss is the minimum
    of a resample with probability n^-n)."""

    def se(x):
        return np.std(x, ddof=1) / math.sqrt(len(x))

    before = shadho.best_loss_spread(good)
    after = shadho.best_loss_spread([*good, bad])
    assert abs(after - before) < 0.01
    assert abs(after - before) < 0.1 * (se([*good, bad]) - se(good))


def test_uncertainty_hand_computed_and_order_free():
    assert shadho.best_loss_spread([0.1, 0.2]) == pytest.approx(0.0433, abs=1e-4)
    assert shadho.best_loss_spread([0.3]) == 0.0
    assert shadho.best_loss_spread([0.2, 0.1, 0.4]) == shadho.best_loss_spread([0.4, 0.2, 0.1])
    assert shadho.best_loss_spread([0.2, 0.2, 0.2]) == pytest.approx(0.0, abs=1e-12)


def test_pending_trials_are_not_proposed_again_and_count_toward_floors():
    """Pipelined rounds: round 1 is planned before round 0 has results. Its trials continue
    round 0's ids, TPE sees round 0's trials as pending, and the floors count them."""
    spec = _spec(pipeline_depth=2, trials_per_round=5)
    plan0 = shadho.plan_round(spec, 0, [])
    assert sorted(t["subspace"] for t in plan0["trials"]) == sorted(spec.subspaces)
    plan1 = shadho.plan_round(spec, 1, [], plan0["ranking"], pending=plan0["trials"])
    assert plan1 == shadho.plan_round(spec, 1, [], plan0["ranking"], pending=plan0["trials"])
    names0 = {t["trial"] for t in plan0["trials"]}
    assert not names0 & {t["trial"] for t in plan1["trials"]}
    for sub in spec.subspaces:
        tids = sorted(
            t["tid"] for t in [*plan0["trials"], *plan1["trials"]] if t["subspace"] == sub
        )
        assert tids == list(range(len(tids)))
    # Round 2 sees round 0's results, round 1 still pending; merging stays exact.
    h0 = shadho.merge_round([], plan0, _results(plan0, lambda t: 1.0))
    plan2 = shadho.plan_round(spec, 2, h0, plan1["ranking"], pending=plan1["trials"])
    h1 = shadho.merge_round(h0, plan1, _results(plan1, lambda t: 1.0))
    h2 = shadho.merge_round(h1, plan2, _results(plan2, lambda t: 1.0))
    assert len({r["trial"] for r in h2}) == 15


def test_cli_plan_reads_pending_plans(tmp_path):
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(
        json.dumps({"space": SPACE, "hardware": HARDWARE, "seed": 3, "pipeline_depth": 2})
    )
    run = ["plan", str(spec_file)]
    p0, p1 = tmp_path / "0.json", tmp_path / "1.json"
    assert main([*run, "--round", "0", "--out", str(p0)]) == 0
    assert (
        main(
            [*run, "--round", "1", "--previous-plan", str(p0), "--pending", str(p0)]
            + ["--out", str(p1)]
        )
        == 0
    )
    spec = shadho.load_spec(json.loads(spec_file.read_text()))
    plan0 = shadho.read_json(p0)
    assert shadho.read_json(p1) == json.loads(
        json.dumps(shadho.plan_round(spec, 1, [], plan0["ranking"], pending=plan0["trials"]))
    )


def test_a_missing_module_stops_the_search_with_the_pip_line(tmp_path, capsys):
    """Issue 16: without torch every CNN trial failed with ModuleNotFoundError buried in its
    record. requires: names the module; a missing one stops round 0's planning (exit 2, one
    line naming the pip install), and no plan is written."""
    requires = {"cnn": {"no_such_module_i16": "no-such-dist==1.0"}}
    spec = _spec(requires=requires)
    with pytest.raises(shadho.ShadhoError) as caught:
        shadho.check_requirements(spec)
    message = str(caught.value)
    assert "\n" not in message
    assert "'cnn'" in message and "pip install no-such-dist==1.0" in message
    assert shadho.missing_requirements(_spec(requires={"*": ["json"]})) == []
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(json.dumps({"space": SPACE, "hardware": HARDWARE, "requires": requires}))
    out = tmp_path / "plan.json"
    code = main(["plan", str(spec_file), "--round", "0", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and not out.exists()
    assert err.strip().count("\n") == 0 and "pip install no-such-dist==1.0" in err


@pytest.mark.parametrize(
    ("requires", "key"),
    [
        ({"nope": ["torch"]}, "requires.nope"),
        ({"cnn": 3}, "requires.cnn"),
        ("torch", "requires"),
    ],
)
def test_bad_requires_is_a_spec_error_naming_the_key(requires, key):
    with pytest.raises(shadho.SpecError) as caught:
        _spec(requires=requires)
    assert caught.value.key == f"hpo.{key}"


def test_pipeline_depth_and_explore_fraction_are_validated():
    with pytest.raises(shadho.SpecError, match="pipeline_depth"):
        _spec(pipeline_depth=0)
    with pytest.raises(shadho.SpecError, match="explore_fraction"):
        _spec(explore_fraction=1.5)
    with pytest.raises(shadho.SpecError, match="duration_aware_split"):
        _spec(duration_aware_split="yes")


def test_placement_starts_behind_the_backlog_of_pending_rounds():
    """Pipelined rounds: the trials of rounds still running keep a class busy. A class with 10 s
    of pending work per worker gets a new round's 1-second trials only once the idle class
    would finish them later than it; without the backlog they split evenly."""
    a, b = shadho.HardwareClass("a", count=1), shadho.HardwareClass("b", count=1)
    both = [["a", "b"]] * 6
    assert sorted(shadho.place_trials([1.0] * 6, both, [a, b])) == ["a"] * 3 + ["b"] * 3
    assert shadho.place_trials([1.0] * 6, both, [a, b], backlog={"b": 10.0}) == ["a"] * 6
    spec = _spec(pipeline_depth=2, trials_per_round=5)
    plan0 = shadho.plan_round(spec, 0, [])
    heavy = [{**t, "hw_class": "slow", "predicted_cost": 100.0} for t in plan0["trials"]]
    plan1 = shadho.plan_round(spec, 1, [], plan0["ranking"], pending=heavy)
    assert {t["hw_class"] for t in plan1["trials"]} == {"fast"}
