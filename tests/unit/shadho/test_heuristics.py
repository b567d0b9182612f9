"""The SHADHO heuristics against hand-computed values."""

import math

import numpy as np
import pytest
from hyperopt import hp

import snakemake_shadho as shadho
from snakemake_shadho import HardwareClass, SubspaceStats


def test_complexity_terms_by_domain_kind():
    """2 + width for continuous domains, 2 - 1/n for discrete ones, 1 for constants."""
    space = {
        "k": "rbf",
        "x": hp.uniform("x", -1, 3),  # 2 + 4
        "lr": hp.loguniform("lr", math.log(1e-3), math.log(1e-1)),  # 2 + ln(100)
        "n": hp.randint("n", 2, 6),  # n = 4: 1.75
        "act": hp.choice("act", ["relu", "tanh", "gelu"]),  # 5/3
        "e": hp.quniform("e", 2, 8, 2),  # 2, 4, 6, 8: 1.75
        "z": hp.normal("z", 0, 0.5),  # 2 + 2 * 3.2905 * 0.5
    }
    terms = shadho.domain_terms(space)
    assert terms["x"] == pytest.approx(6.0)
    assert terms["lr"] == pytest.approx(2 + math.log(100))
    assert terms["n"] == pytest.approx(1.75)
    assert terms["act"] == pytest.approx(5 / 3)
    assert terms["e"] == pytest.approx(1.75)
    assert terms["z"] == pytest.approx(5.2905267)
    expected = math.log(6 * (2 + math.log(100)) * 1.75 * (5 / 3) * 1.75 * 5.2905267)
    assert shadho.log_complexity(space) == pytest.approx(expected)


def test_svm_kernels_order_by_complexity():
    """poly > sigmoid > rbf > linear, as in SHADHO's SVM example (rbf: ln 15.86 + ln 13.51)."""
    C = {"loguniform": [0.03125, 32768]}
    g = {"loguniform": [1e-4, 10]}
    cfg = {
        "m": {
            "exclusive": {
                "linear": {"C": C},
                "rbf": {"C": C, "gamma": g},
                "sigmoid": {"C": C, "gamma": g, "coef0": {"uniform": [-1, 1]}},
                "poly": {
                    "C": C,
                    "gamma": g,
                    "coef0": {"uniform": [-1, 1]},
                    "degree": {"randint": [2, 6]},
                },
            }
        }
    }
    subs = shadho.split_space(shadho.space_from_config(cfg))
    lc = {n: shadho.log_complexity(s.space) for n, s in subs.items()}
    assert lc["rbf"] == pytest.approx(math.log(2 + 20 * math.log(2)) + math.log(2 + math.log(1e5)))
    assert lc["poly"] > lc["sigmoid"] > lc["rbf"] > lc["linear"]


def _records(name, losses, durations=None, cls="slow"):
    durations = durations or [1.0] * len(losses)
    return [
        {
            "subspace": name,
            "status": "ok" if loss is not None else "fail",
            "loss": loss,
            "hw_class": cls,
            "duration_s": d,
        }
        for loss, d in zip(losses, durations, strict=True)
    ]


def test_subspace_stats_hand_computed():
    """best = min loss; uncertainty = the exact bootstrap sd of the best loss (resamples of
    [0.05, 0.05, 0.35] have minimum 0.35 with probability 1/27); cost = duration x speed."""
    recs = _records("b", [0.05, 0.05, 0.35, None], [1.0, 2.0, 3.0, 2.0], cls="fast")
    s = shadho.subspace_stats("b", 5.0, recs, {"fast": 4.0}, min_results=3)
    assert s.best_loss == 0.05 and s.n_ok == 3 and s.n_failed == 1
    assert s.uncertainty == pytest.approx(0.3 * math.sqrt(26) / 27)
    assert s.mean_cost == pytest.approx(4.0 * 2.0)
    few = shadho.subspace_stats("c", 1.0, _records("c", [0.2]), {}, min_results=3)
    assert not few.explored and few.best_loss == 0.2


def test_borda_ranking_hand_computed():
    """A: complexity pos 1, perf pos 2, unc pos 2 = 5; B: 0+1+1 = 2; C (unexplored): 2+0+0 = 2.
    B and C tie at 2; B is more complex, so B, C, A."""
    a = SubspaceStats("A", 3.0, 3, 0, 0.1, 0.1 / math.sqrt(3))
    b = SubspaceStats("B", 5.0, 3, 0, 0.05, 0.1)
    c = SubspaceStats("C", 1.0, 1, 0, 0.2, None)
    assert shadho.borda_scores([a, b, c]) == {"A": 5, "B": 2, "C": 2}
    assert shadho.borda_order([a, b, c]) == ["B", "C", "A"]
    # B also holds the best loss of the explored sub-spaces, so it leads the ranking anyway.
    assert shadho.incumbent([a, b, c]) == "B"
    assert shadho.rank_subspaces([a, b, c]) == ["B", "C", "A"]


def test_ranking_has_no_zero_ties_of_the_reference_code():
    """The reference code's product of positions gives rank 0 to whichever sub-space is first in
    any ordering; Borda separates them."""
    x = SubspaceStats("x", 9.0, 5, 0, 0.9, 0.001)  # most complex, worst, most settled
    y = SubspaceStats("y", 1.0, 5, 0, 0.1, 0.002)  # least complex, best
    z = SubspaceStats("z", 5.0, 5, 0, 0.5, 0.5)  # middle, most uncertain
    assert shadho.borda_scores([x, y, z]) == {"x": 4, "y": 3, "z": 2}
    assert shadho.borda_order([x, y, z]) == ["z", "y", "x"]


def test_incumbent_leads_the_ranking_even_when_borda_sinks_it():
    """The digits case: the sub-space with the best loss is the least complex and the most
    settled, so Borda puts it last (0+... positions: cnn 2+0+2 = 4 vs svm 0+1+0 = 1, mid
    1+2+1 = 4, ties to complexity). The ranking moves it to the front; the rest keep Borda."""
    cnn = SubspaceStats("cnn", 1.0, 10, 0, 0.015, 0.001)
    svm = SubspaceStats("svm", 9.0, 10, 0, 0.024, 0.05)
    mid = SubspaceStats("mid", 5.0, 10, 0, 0.300, 0.01)
    assert shadho.borda_scores([cnn, svm, mid]) == {"cnn": 4, "svm": 1, "mid": 4}
    assert shadho.borda_order([cnn, svm, mid]) == ["svm", "mid", "cnn"]
    assert shadho.incumbent([cnn, svm, mid]) == "cnn"
    assert shadho.rank_subspaces([cnn, svm, mid]) == ["cnn", "svm", "mid"]


def test_no_incumbent_before_any_subspace_is_explored():
    """Round 0 and the first rounds: nothing explored, the ranking is the Borda order."""
    a = SubspaceStats("a", 2.0, 1, 0, 0.01, None)
    b = SubspaceStats("b", 4.0, 0, 0, None, None)
    assert shadho.incumbent([a, b]) is None
    assert shadho.rank_subspaces([a, b]) == shadho.borda_order([a, b]) == ["b", "a"]


def test_a_subspace_that_only_fails_sinks_instead_of_staying_unexplored():
    """Three failures explore a sub-space (no best loss, uncertainty 0): it is last on
    performance and uncertainty, where before it stayed 'unexplored', first, for ever."""
    failing = shadho.subspace_stats("f", 9.0, _records("f", [None, None, None]), {}, 3)
    assert failing.explored and failing.best_loss is None and failing.uncertainty == 0.0
    ok = shadho.subspace_stats("ok", 1.0, _records("ok", [0.2, 0.3, 0.4]), {}, 3)
    # f: complexity 0 + performance 1 + uncertainty 1 = 2; ok: 1 + 0 + 0 = 1.
    assert shadho.borda_scores([failing, ok]) == {"f": 2, "ok": 1}
    assert shadho.rank_subspaces([failing, ok]) == ["ok", "f"]
    single = shadho.subspace_stats("s", 1.0, _records("s", [0.2, None, None]), {}, 3)
    assert single.explored and single.best_loss == 0.2 and single.uncertainty == 0.0


def test_assign_blocks_hand_computed_8_over_3():
    """Home blocks [0-2], [3-5], [6-7]; the last of each block but the slowest's is shared with
    the next slower class."""
    assert shadho.assign_blocks(8, 3) == [[0], [0], [0, 1], [1], [1], [1, 2], [2], [2]]
    assert shadho.assign_blocks(2, 4) == [[0, 1], [2, 3]]
    assert shadho.assign_blocks(1, 3) == [[0, 1, 2]]


def test_two_classes_assignment_is_not_vacuous():
    """Issue 16: with two classes every sub-space went to both, so the assignment said nothing.
    Now the fast class keeps the top of the ranking to itself and the slow one the bottom."""
    assert shadho.assign_blocks(5, 2) == [[0], [0], [0, 1], [1], [1]]
    assert shadho.assign_blocks(3, 2) == [[0], [0, 1], [1]]
    fast, slow = HardwareClass("fast", speed=2), HardwareClass("slow")
    ranking = ["cnn", "rbf", "poly", "sigmoid", "linear"]
    serving = shadho.assign_classes(ranking, [fast, slow], {s: ["fast", "slow"] for s in ranking})
    assert serving == {"fast": ["cnn", "rbf", "poly"], "slow": ["poly", "sigmoid", "linear"]}


@pytest.mark.parametrize("n", range(1, 11))
@pytest.mark.parametrize("m", range(1, 11))
def test_assign_blocks_properties_for_every_size(n, m):
    """Every sub-space has a class, the top-ranked one the fastest, every class serves a
    contiguous window of the ranking and no class is idle; with n >= m >= 2 adjacent windows
    share exactly one sub-space and the fastest class does not serve the last-ranked one, and
    with n > m no class serves everything."""
    blocks = shadho.assign_blocks(n, m)
    assert len(blocks) == n
    for classes in blocks:
        assert len(set(classes)) == len(classes) >= 1
        assert all(0 <= j < m for j in classes)
    assert 0 in blocks[0]
    windows = []
    for j in range(m):
        served = [i for i, classes in enumerate(blocks) if j in classes]
        assert served, f"class {j} serves nothing"
        assert served == list(range(served[0], served[-1] + 1))
        windows.append(set(served))
    if n >= m >= 2:
        for j in range(m - 1):
            assert len(windows[j] & windows[j + 1]) == 1
        assert n - 1 not in windows[0]
    if n > m >= 2:
        assert all(len(w) < n for w in windows)


def test_assign_classes_gives_a_subspace_to_the_class_declared_fastest_on_it():
    """Three classes by base speed: fast, mid, gpu (speed 1, but 8 on 'cnn'). Ranked first,
    the CNN's block is fast and mid; the gpu class, declared fastest on it, serves it too. The
    other sub-spaces keep their blocks."""
    fast = HardwareClass("fast", speed=4)
    mid = HardwareClass("mid", speed=2)
    gpu = HardwareClass("gpu", speed=1, speed_by_subspace=(("cnn", 8.0),))
    everywhere = ["fast", "mid", "gpu"]
    allowed = {s: everywhere for s in ("cnn", "a", "b", "c")}
    # cnn ranked first: its block is the fast class's (assign_blocks(4, 3)[0] == [0]).
    serving = shadho.assign_classes(["cnn", "a", "b", "c"], [fast, mid, gpu], allowed)
    assert shadho.assign_blocks(4, 3)[0] == [0]
    assert "cnn" in serving["gpu"] and "cnn" in serving["fast"] and "cnn" not in serving["mid"]
    # Without the declaration the gpu class (slowest) does not get the top-ranked sub-space.
    plain = HardwareClass("gpu", speed=1)
    serving = shadho.assign_classes(["cnn", "a", "b", "c"], [fast, mid, plain], allowed)
    assert "cnn" not in serving["gpu"]
    # A class not allowed to run it does not get it.
    only_fast = {**allowed, "cnn": ["fast"]}
    serving = shadho.assign_classes(["cnn", "a", "b", "c"], [fast, mid, gpu], only_fast)
    assert serving["gpu"] and "cnn" not in serving["gpu"]


def test_assign_classes_honours_restrictions_and_feeds_every_class():
    classes = [
        HardwareClass("gpu", speed=4),
        HardwareClass("mid", speed=2),
        HardwareClass("cpu", speed=1),
    ]
    ranking = ["a", "b", "c", "cnn"]
    allowed = {
        "a": ["gpu", "mid", "cpu"],
        "b": ["gpu", "mid", "cpu"],
        "c": ["gpu", "mid", "cpu"],
        "cnn": ["gpu"],
    }
    serving = shadho.assign_classes(ranking, classes, allowed)
    # blocks(4, 3): a->[0] b->[0,1] c->[1,2] cnn->[2]. cnn may only run on gpu, so it moves
    # to gpu (its allowed class nearest home); cpu keeps c.
    assert shadho.assign_blocks(4, 3) == [[0], [0, 1], [1, 2], [2]]
    assert serving == {"gpu": ["a", "b", "cnn"], "mid": ["b", "c"], "cpu": ["c"]}
    # cpu left with nothing (c restricted away from it) borrows mid's sub-spaces.
    restricted = {**allowed, "c": ["gpu", "mid"]}
    serving = shadho.assign_classes(ranking, classes, restricted)
    assert serving["cpu"] == ["b"]


def test_the_incumbent_is_served_by_every_class_that_may_run_it():
    """Issue 30, part 3: a window kept the incumbent on the fastest class, so it got about half
    of that class's draws (the CNN 15 of 48 trials where Optuna's TPE gives it 24). As ``lead``
    it heads every class that may run it; the other sub-spaces keep their windows."""
    fast, slow = HardwareClass("fast", speed=3), HardwareClass("slow")
    ranking = ["cnn", "rbf", "poly", "sigmoid", "linear"]
    everywhere = {s: ["fast", "slow"] for s in ranking}
    serving = shadho.assign_classes(ranking, [fast, slow], everywhere, lead="cnn")
    assert serving == {
        "fast": ["cnn", "rbf", "poly"],
        "slow": ["cnn", "poly", "sigmoid", "linear"],
    }
    # Restricted to the fast class, it stays there.
    only_fast = {**everywhere, "cnn": ["fast"]}
    serving = shadho.assign_classes(ranking, [fast, slow], only_fast, lead="cnn")
    assert serving == {"fast": ["cnn", "rbf", "poly"], "slow": ["poly", "sigmoid", "linear"]}
    # No incumbent yet (None) or an unknown name: the windows alone.
    for lead in (None, "mlp"):
        assert shadho.assign_classes(ranking, [fast, slow], everywhere, lead=lead) == {
            "fast": ["cnn", "rbf", "poly"],
            "slow": ["poly", "sigmoid", "linear"],
        }


def test_an_incumbent_with_a_specialist_keeps_to_its_windows():
    """A GPU class runs the CNN 10x as fast: the CNN as incumbent goes to the GPU and its
    window, not to every CPU. An SVM as incumbent goes everywhere, after the GPU's CNN."""
    gpu = HardwareClass("gpu", speed=1, speed_by_subspace=(("cnn", 10.0),))
    cpu = HardwareClass("cpu", speed=1)
    ranking = ["cnn", "rbf", "poly", "linear"]
    allowed = {s: ["gpu", "cpu"] for s in ranking}
    windows = shadho.assign_classes(ranking, [gpu, cpu], allowed)
    assert shadho.assign_classes(ranking, [gpu, cpu], allowed, lead="cnn") == windows
    ranking = ["rbf", "cnn", "poly", "linear"]
    serving = shadho.assign_classes(ranking, [gpu, cpu], allowed, lead="rbf")
    assert serving["gpu"][:2] == ["cnn", "rbf"]
    assert serving["cpu"][0] == "rbf"


def test_planck_weights():
    assert shadho.planck_weights(4) == pytest.approx([0.4551, 0.2760, 0.1674, 0.1015], abs=1e-4)
    assert sum(shadho.planck_weights(7, 1.3)) == pytest.approx(1.0)


def test_split_round_balances_predicted_load_per_capacity():
    """fast (capacity 2) and slow (capacity 1) start level, tie to the faster: A on fast (load
    2 -> 1.0 per capacity); slow is lower: B (1 -> 1.0); tie again: A on fast."""
    fast, slow = HardwareClass("fast", count=1, speed=2), HardwareClass("slow", count=1)
    pairs = shadho.split_round(
        3,
        [fast, slow],
        {"fast": ["A"], "slow": ["B"]},
        {"A": 2.0, "B": 1.0},
        np.random.default_rng(0),
    )
    assert pairs == [("fast", "A"), ("slow", "B"), ("fast", "A")]


def test_split_round_load_is_busy_time_on_the_subspace():
    """gpu (1 worker, speed 1, 4 on 'cnn') and cpu (1 worker, speed 1), both serving only
    'cnn' at cost 4: a CNN adds 1.0 to gpu's load and 4.0 to cpu's. gpu takes the first (tie
    at 0, list order), cpu the second (0 < 1.0), and gpu the next three (its loads 1.0, 2.0,
    3.0 are all below cpu's 4.0)."""
    gpu = HardwareClass("gpu", count=1, speed=1, speed_by_subspace=(("cnn", 4.0),))
    cpu = HardwareClass("cpu", count=1, speed=1)
    pairs = shadho.split_round(
        5, [gpu, cpu], {"gpu": ["cnn"], "cpu": ["cnn"]}, {"cnn": 4.0}, np.random.default_rng(0)
    )
    assert [c for c, _ in pairs] == ["gpu", "cpu", "gpu", "gpu", "gpu"]


def test_split_round_gives_unexplored_subspaces_their_floor_first():
    """floor: a needs 2 more trials, c (slow only) 1, dealt in turns: a, c, a. Each goes to the
    least loaded class serving it: a on fast (tie at 0, to the faster), c on slow (its only
    class), a on fast (0.5 per capacity vs slow's 1.0); the last trial is a Planck draw on
    fast (1.0 vs 1.0, tie to the faster)."""
    fast, slow = HardwareClass("fast", count=1, speed=2), HardwareClass("slow", count=1)
    serving = {"fast": ["b", "a"], "slow": ["b", "a", "c"]}
    costs = {"a": 1.0, "b": 1.0, "c": 1.0}
    pairs = shadho.split_round(
        4, [fast, slow], serving, costs, np.random.default_rng(0), floor={"a": 2, "c": 1}
    )
    assert pairs[:3] == [("fast", "a"), ("slow", "c"), ("fast", "a")]
    assert pairs[3][0] == "fast" and pairs[3][1] in serving["fast"]


def test_split_round_deals_floors_in_turns_when_the_round_is_too_small():
    """Three unexplored sub-spaces needing 3 each and a round of 4: every one starts (a, b, c,
    then a again) rather than a taking 3 and c none."""
    one = HardwareClass("one", count=4)
    serving = {"one": ["a", "b", "c"]}
    pairs = shadho.split_round(
        4,
        [one],
        serving,
        {"a": 1.0, "b": 1.0, "c": 1.0},
        np.random.default_rng(0),
        floor={"a": 3, "b": 3, "c": 3},
    )
    assert [sub for _, sub in pairs] == ["a", "b", "c", "a"]


def test_split_round_gives_fast_classes_trials_in_proportion_to_capacity():
    """4 fast workers at speed 4 and 16 slow ones at speed 1 have equal capacity: with equal
    costs they get equal numbers of trials (the hardware-agnostic split would be 1:4)."""
    fast = HardwareClass("fast", count=4, speed=4)
    slow = HardwareClass("slow", count=16, speed=1)
    pairs = shadho.split_round(
        40,
        [fast, slow],
        {"fast": ["a", "b"], "slow": ["a", "b"]},
        {"a": 1.0, "b": 1.0},
        np.random.default_rng(1),
    )
    counts = {c: sum(1 for k, _ in pairs if k == c) for c in ("fast", "slow")}
    assert counts == {"fast": 20, "slow": 20}


def test_planned_serving_is_not_vacuous_for_two_classes_with_or_without_measurements():
    """The plan's own serving (measured speeds: every class then has a speed on every
    sub-space) keeps the two-class assignment informative: the fast class does not serve the
    last-ranked sub-space, the slow one not the first unless it is the incumbent (the lead,
    served by every class)."""
    spec = shadho.load_spec(
        {
            "space": {
                "m": {
                    "exclusive": {
                        n: {"x": {"uniform": [0, 1]}, "k": i}
                        for i, n in enumerate(["a", "b", "c", "d"])
                    }
                }
            },
            "hardware": {"fast": {"speed": 2}, "slow": {"speed": 1}},
            "trials_per_round": 8,
        }
    )
    plan = shadho.plan_round(spec, 0, [])
    history = shadho.merge_round(
        [],
        plan,
        [
            {**t, "status": "ok", "loss": 0.1, "duration_s": 1.0 + t["params"]["x"]}
            for t in plan["trials"]
        ],
    )
    for p in (plan, shadho.plan_round(spec, 1, history, plan["ranking"])):
        order, lead = p["ranking"]["order"], p["ranking"]["lead"]
        assert order[-1] not in p["serving"]["fast"]
        assert order[0] not in p["serving"]["slow"] or order[0] == lead
        if lead is not None:
            assert p["serving"]["slow"][0] == p["serving"]["fast"][0] == lead
