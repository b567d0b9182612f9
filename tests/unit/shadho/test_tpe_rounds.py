"""Ask/tell TPE per sub-space, rounds planned from records, and their merge."""

import math

import pytest
from hyperopt import hp
from hypothesis import given, settings
from hypothesis import strategies as st

import snakemake_shadho as shadho
from snakemake_shadho import SubspaceOptimizer
from tests.conftest import examples

SPACE = {
    "kernel": "rbf",
    "x": hp.uniform("x", -3, 3),
    "act": hp.choice("act", [{"kind": "a"}, {"kind": "b", "w": hp.uniform("w", 0, 1)}]),
}


def loss_of(params):
    extra = params["act"].get("w", 0.5)
    return (params["x"] - 1) ** 2 + extra


def _records(suggestions, losses):
    return [
        {"tid": s.tid, "vals": s.vals, "status": "ok" if loss is not None else "fail", "loss": loss}
        for s, loss in zip(suggestions, losses, strict=True)
    ]


def test_rebuilt_optimizer_asks_what_the_live_one_asks():
    """Telling a live optimizer and rebuilding one from the records give the same next trials,
    also past TPE's start-up phase and with a conditional label active in only some trials."""
    live = SubspaceOptimizer(SPACE, n_startup_jobs=3)
    records = []
    for round_index in range(4):
        asked = live.ask(3, seed=round_index)
        rebuilt = SubspaceOptimizer(SPACE, records, n_startup_jobs=3)
        assert [s.vals for s in rebuilt.ask(3, seed=round_index)] == [s.vals for s in asked]
        losses = [loss_of(s.params) for s in asked]
        losses[1] = None if round_index == 2 else losses[1]  # one failure
        for s, loss in zip(asked, losses, strict=True):
            live.tell(s.tid, loss)
        records += _records(asked, losses)
    assert [r["tid"] for r in records] == list(range(12))
    assert any("w" in r["vals"] for r in records) and any("w" not in r["vals"] for r in records)


def test_tell_and_best():
    opt = SubspaceOptimizer(SPACE, n_startup_jobs=2)
    asked = opt.ask(4, seed=7)
    for s in asked:
        opt.tell(s.tid, loss_of(s.params))
    best_loss, best_params = opt.best()
    assert best_loss == pytest.approx(min(loss_of(s.params) for s in asked))
    assert best_params["kernel"] == "rbf"
    with pytest.raises(KeyError):
        opt.tell(99, 1.0)


def test_tpe_improves_on_its_random_start():
    """Real TPE in rounds of 4 from records: the best of rounds 3-6 beats the random start."""
    opt_records = []
    space = {"x": hp.uniform("x", -5, 5), "y": hp.uniform("y", -5, 5)}
    for r in range(7):
        asked = SubspaceOptimizer(space, opt_records, n_startup_jobs=8).ask(4, seed=r)
        losses = [(s.params["x"] - 1) ** 2 + (s.params["y"] + 2) ** 2 for s in asked]
        opt_records += _records(asked, losses)
    start = min(r["loss"] for r in opt_records[:8])
    later = min(r["loss"] for r in opt_records[12:])
    assert later < start


def test_records_with_unknown_labels_or_duplicate_ids_are_rejected():
    with pytest.raises(ValueError, match="labels not in the space"):
        SubspaceOptimizer(SPACE, [{"tid": 0, "vals": {"nope": 1}, "status": "ok", "loss": 1}])
    rec = {"tid": 0, "vals": {"x": 0.0, "act": 0}, "status": "ok", "loss": 1.0}
    with pytest.raises(ValueError, match="share a trial id"):
        SubspaceOptimizer(SPACE, [rec, dict(rec)])


def _spec(**settings):
    config = {
        "space": {
            "m": {
                "exclusive": {
                    "lin": {"C": {"loguniform": [0.01, 100]}},
                    "rbf": {"C": {"loguniform": [0.01, 100]}, "g": {"loguniform": [1e-3, 1]}},
                    "big": {
                        "C": {"loguniform": [0.01, 100]},
                        "g": {"loguniform": [1e-3, 1]},
                        "c0": {"uniform": [-1, 1]},
                        "_classes": ["fast"],
                    },
                }
            }
        },
        "hardware": {
            "fast": {"count": 1, "speed": 3, "slurm_partition": "gpu"},
            "slow": {"count": 2, "slurm_partition": "cpu"},
        },
        "trials_per_round": 6,
        "rerank_every": 10,
        "n_startup_jobs": 3,
        **settings,
    }
    return shadho.load_spec(config)


def fake_results(plan, failing=()):
    """Results of a plan from a cheap analytic objective (durations as if measured)."""
    out = []
    for t in plan["trials"]:
        p = t["params"]
        loss = abs(math.log10(p["C"])) / 10 + (0.1 if p["m"] == "lin" else 0.0)
        failed = t["trial"] in failing
        out.append(
            {
                **t,
                "status": "fail" if failed else "ok",
                "loss": None if failed else loss,
                "error": "boom" if failed else None,
                "duration_s": 1.0 + loss,
            }
        )
    return out


def test_rounds_are_deterministic_and_continue_from_records():
    """Planning a round twice gives identical plans; trial ids continue across rounds; the
    restricted sub-space only runs on its class."""
    spec = _spec()
    history, previous = [], None
    for r in range(3):
        plan = shadho.plan_round(spec, r, history, previous)
        assert plan == shadho.plan_round(spec, r, history, previous)
        assert len(plan["trials"]) == 6
        history = shadho.merge_round(history, plan, fake_results(plan))
        previous = plan["ranking"]
    names = [h["trial"] for h in history]
    assert len(set(names)) == 18
    for sub in ("lin", "rbf", "big"):
        tids = sorted(h["tid"] for h in history if h["subspace"] == sub)
        assert tids == list(range(len(tids)))
    assert {h["hw_class"] for h in history if h["subspace"] == "big"} <= {"fast"}


def test_reranking_happens_every_k_results():
    spec = _spec(rerank_every=10)
    plan0 = shadho.plan_round(spec, 0, [], None)
    assert plan0["ranking"]["at_results"] == 0
    h1 = shadho.merge_round([], plan0, fake_results(plan0))
    plan1 = shadho.plan_round(spec, 1, h1, plan0["ranking"])
    assert plan1["ranking"] == plan0["ranking"]  # 6 < 10 new results: kept
    h2 = shadho.merge_round(h1, plan1, fake_results(plan1))
    plan2 = shadho.plan_round(spec, 2, h2, plan1["ranking"])
    assert plan2["ranking"]["at_results"] == 12  # 12 >= 10: re-ranked


def _reranked(plan, previous):
    """Did ``plan`` make a new ranking (a kept one is a copy of the previous)?"""
    return previous is None or plan["ranking"]["at_trials"] != previous["at_trials"]


@settings(max_examples=examples(10), deadline=None)
@given(batch=st.integers(2, 8), every=st.integers(1, 16), running=st.integers(1, 3))
def test_a_plan_made_beside_running_trials_reranks_when_a_round_would(batch, every, running):
    """Issue 16: an asynchronous driver (and a pipelined round) plans while trials still run.
    A ranking was due only once rerank_every *results* had arrived, so such a plan re-ranked
    one plan late, its batch split by the previous ranking. A ranking is now due after
    rerank_every decided trials (running ones included): plan k made with ``running`` of its
    predecessors' trials unfinished re-ranks exactly when round k, all results in, does."""
    spec = _spec(rerank_every=every, trials_per_round=batch)
    rounds_prev = async_prev = None
    history: list = []
    for k in range(5):
        done, pending = history, []
        if k:  # the async plan: the last `running` trials are still running
            cut = max(len(history) - running, 0)
            done, pending = history[:cut], history[cut:]
        by_rounds = shadho.plan_round(spec, k, history, rounds_prev)
        by_async = shadho.plan_round(spec, k, done, async_prev, pending=pending)
        assert _reranked(by_async, async_prev) == _reranked(by_rounds, rounds_prev), k
        rounds_prev, async_prev = by_rounds["ranking"], by_async["ranking"]
        history = shadho.merge_round(history, by_rounds, fake_results(by_rounds))


def test_round_zero_explores_every_subspace_before_planck_draws():
    """min_results (3) trials per sub-space come first: with 9 trials in round 0 each of the 3
    sub-spaces gets exactly 3, whatever the ranking; once explored, no floor is left."""
    spec = _spec(trials_per_round=9)
    plan = shadho.plan_round(spec, 0, [], None)
    counts = {s: sum(t["subspace"] == s for t in plan["trials"]) for s in ("lin", "rbf", "big")}
    assert counts == {"lin": 3, "rbf": 3, "big": 3}
    history = shadho.merge_round([], plan, fake_results(plan))
    stats = shadho.compute_stats(spec, history)
    assert all(s.explored for s in stats.values())


def test_fast_class_gets_more_trials_per_worker():
    """fast: 1 worker at speed 3 (capacity 3); slow: 2 workers at speed 1 (capacity 2)."""
    spec = _spec(trials_per_round=10)
    plan = shadho.plan_round(spec, 0, [], None)
    n_fast = sum(t["hw_class"] == "fast" for t in plan["trials"])
    n_slow = len(plan["trials"]) - n_fast
    assert n_fast / 1 > 1.5 * (n_slow / 2)  # per worker
    load = {
        c: sum(t["predicted_cost"] for t in plan["trials"] if t["hw_class"] == c)
        for c in ("fast", "slow")
    }
    # predicted finish times of the two classes are balanced to within one trial
    biggest = max(t["predicted_cost"] for t in plan["trials"])
    assert abs(load["fast"] / 3 - load["slow"] / 2) <= biggest


def test_merge_rejects_missing_unplanned_and_repeated_trials():
    spec = _spec()
    plan = shadho.plan_round(spec, 0, [], None)
    results = fake_results(plan, failing={plan["trials"][0]["trial"]})
    with pytest.raises(ValueError, match="missing"):
        shadho.merge_round([], plan, results[1:])
    with pytest.raises(ValueError, match="unplanned"):
        shadho.merge_round([], plan, [*results, {**results[0], "trial": "lin.99"}])
    history = shadho.merge_round([], plan, results)
    assert history[0]["status"] == "fail"
    with pytest.raises(ValueError, match="repeats"):
        shadho.merge_round(history, plan, results)
