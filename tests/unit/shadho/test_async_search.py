"""SHADHO without rounds (snakemake_shadho.AsyncSearch and the simulator's shadho_async): no
worker idles while a trial it may run is queued, every trial handed out is told once, the
search is deterministic for one order of calls, and on a simulated cluster it keeps every
worker as busy as the asynchronous hardware-agnostic baseline. Pure: no processes."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import snakemake_shadho as shadho
from snakemake_shadho import _simulate as sim
from tests.conftest import examples

from .test_bench_baselines import _options, _pool, _spec


def _small_spec(restricted=False, **kw):
    options = _options()
    if restricted:  # the CNN may run on the fast class only
        options = {**options, "cnn": {**options["cnn"], "_classes": ["fast"]}}
    return _spec(options, **kw)


def test_every_worker_gets_a_trial_of_its_class_and_each_trial_is_told_once():
    spec = _small_spec(fast=2, slow=6)
    search = shadho.AsyncSearch(spec)
    asked = ["fast"] * 2 + ["slow"] * 6
    handed = [search.next_for(c) for c in asked]
    assert len({t["trial"] for t in handed}) == 8
    assert [t["hw_class"] for t in handed] == asked
    for t in handed:
        search.tell(t, 0.1, 1.0)
    assert [r["trial"] for r in search.history] == [t["trial"] for t in handed]
    assert all(r["status"] == "ok" and r["duration_s"] == 1.0 for r in search.history)
    with pytest.raises(KeyError, match="told already"):
        search.tell(handed[0], 0.1, 1.0)
    with pytest.raises(KeyError, match="unknown hardware class"):
        search.next_for("gpu")


def test_a_class_left_with_nothing_steals_the_shortest_trial_it_may_run(monkeypatch):
    search = shadho.AsyncSearch(_small_spec(fast=1, slow=1), batch=6)
    search.next_for("fast")
    queued = [*search._queues["fast"], *search._queues["slow"]]
    for i, t in enumerate(queued):  # distinct predictions, the shortest in the middle
        t["predicted_cost"] = 1.0 + abs(i - len(queued) // 2)
    search._queues = {"fast": list(queued), "slow": []}
    monkeypatch.setattr(search, "_plan", lambda: None)  # no new plan feeds slow
    stolen = search.next_for("slow")
    shortest = min(queued, key=lambda t: t["predicted_cost"])
    assert stolen["trial"] == shortest["trial"] and stolen["hw_class"] == "slow"
    assert search.stolen == 1 and len(search._queues["fast"]) == len(queued) - 1


def test_a_restricted_sub_space_is_never_run_by_a_class_it_excludes():
    spec = _small_spec(restricted=True, fast=1, slow=3)
    search = shadho.AsyncSearch(spec, batch=4)
    for step in range(16):
        cls = "slow" if step % 4 else "fast"
        t = search.next_for(cls)
        assert not (t["subspace"] == "cnn" and t["hw_class"] == "slow")
        search.tell(t, 0.05 + step / 1000, 1.0)


def test_same_calls_same_trials_and_pending_trials_are_not_proposed_twice():
    def run():
        search = shadho.AsyncSearch(_small_spec(fast=1, slow=2), batch=3)
        out = []
        running = []
        for step in range(15):
            running.append(search.next_for(("fast", "slow", "slow")[step % 3]))
            if len(running) == 3:
                t = running.pop(step % 3)
                search.tell(t, (hash(t["trial"]) % 97) / 1000, 0.5)
            out.append((running[-1]["trial"] if running else None, search.plans))
        return out, [r["trial"] for r in search.history]

    a, b = run(), run()
    assert a == b
    names = a[1]
    assert len(names) == len(set(names)), "a trial id is handed out once"


@settings(max_examples=examples(30), deadline=None)
@given(seed=st.integers(0, 10**6), fast=st.integers(1, 2), slow=st.integers(1, 4))
def test_no_worker_idles_and_as_busy_as_the_async_agnostic_baseline(seed, fast, slow):
    """Generated clusters: shadho_async runs every trial back to back on every worker (each
    worker's trials start when its previous one ends, after the start-up), like the agnostic
    baseline, and its makespan is within a trial or two of the baseline's."""
    spec = _small_spec(fast=fast, slow=slow)
    pool = _pool(spec)
    ov = sim.Overheads(per_trial_s=0.05, per_round_s=1.0)
    budget = 2 * (fast + slow) + 1
    mine = sim.simulate_shadho_async(spec, pool, budget, seed, ov)
    base = sim.simulate_agnostic_async(spec, pool, budget, seed, ov)
    assert len(mine.trials) == budget
    for w in range(fast + slow):
        runs = sorted((t.start, t.end) for t in mine.trials if t.worker == w)
        assert runs[0][0] == pytest.approx(1.0)
        assert all(b[0] == pytest.approx(a[1]) for a, b in zip(runs, runs[1:], strict=False))
    longest = max(r["cost"] for r in pool.entries["cnn"]) + 0.05
    assert mine.makespan <= base.makespan + 2 * longest
