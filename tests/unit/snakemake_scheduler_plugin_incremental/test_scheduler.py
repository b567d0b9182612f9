"""The incremental scheduler against Snakemake's own greedy scheduler, on generated rounds."""

import logging
from collections import defaultdict
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from snakemake.scheduling.greedy import Scheduler as GreedyScheduler
from snakemake.scheduling.greedy import SchedulerSettings as GreedySettings
from snakemake_interface_scheduler_plugins.tests import TestSchedulerBase

from snakemake_scheduler_plugin_incremental import Scheduler, SchedulerSettings
from tests.conftest import examples

LOG = logging.getLogger("test")


class TestInterface(TestSchedulerBase):
    """The plugin interface's own conformance test."""

    __test__ = True

    def get_scheduler_cls(self) -> Any:
        return Scheduler

    def get_scheduler_settings(self) -> Any:
        return SchedulerSettings()


class File(str):
    def __new__(cls, name: str, temp: bool = False) -> "File":
        f = super().__new__(cls, name)
        f.temp = temp
        return f

    def is_flagged(self, flag: str) -> bool:
        return flag == "temp" and self.temp


class FakeJob:
    """A ready job as the scheduler sees it; counts how often its resources are read."""

    reads = 0

    def __init__(self, name: str, priority: int, resources: dict[str, Any], input=()):
        self.name = name
        self._priority = priority
        self._resources = resources
        self.input = list(input)

    @property
    def priority(self) -> int:
        return self._priority

    @property
    def scheduler_resources(self) -> dict[str, Any]:
        FakeJob.reads += 1
        return self._resources

    def __repr__(self) -> str:
        return self.name


def incremental(**kw: Any) -> Scheduler:
    return Scheduler(None, SchedulerSettings(**kw), LOG)


def greedy(**kw: Any) -> GreedyScheduler:
    return GreedyScheduler(None, GreedySettings(**kw), LOG)


def free(cores: int, **more: int) -> dict[str, int]:
    return {"_cores": cores, "_nodes": 2**62, "_job_count": 2**62, **more}


shape_st = st.fixed_dictionaries(
    {"_cores": st.integers(1, 4), "_nodes": st.just(1), "_job_count": st.just(1)},
    optional={"mem_mb": st.integers(0, 3000), "gpu": st.integers(0, 2)},
)


@settings(max_examples=examples(60), deadline=None)
@given(
    shapes=st.lists(shape_st, min_size=1, max_size=25),
    rounds=st.lists(
        st.tuples(
            st.integers(0, 8),
            st.integers(0, 6000),
            st.integers(0, 3),
            st.integers(0, 6),
        ),
        min_size=1,
        max_size=8,
    ),
)
def test_selects_what_greedy_selects_round_after_round(shapes, rounds):
    """Each round both schedulers see the same ready jobs and free resources: the same jobs
    are selected (distinct rewards: the greedy scheduler breaks ties by set order)."""
    priorities = iter(range(10_000, 0, -7))
    ready = {FakeJob(f"j{i}", next(priorities), r) for i, r in enumerate(shapes)}
    mine, theirs = incremental(), greedy()
    added = len(shapes)
    for cores, mem, gpu, arriving in rounds:
        resources = free(cores, mem_mb=mem, gpu=gpu)
        expected = theirs.select_jobs(set(ready), [], dict(resources), defaultdict(int))
        got = mine.select_jobs(set(ready), [], dict(resources), defaultdict(int))
        assert set(got) == set(expected)
        ready -= set(got)
        for i in range(arriving):  # dependents become ready
            ready.add(FakeJob(f"n{added + i}", next(priorities), shapes[i % len(shapes)]))
        added += arriving


def test_priority_then_temp_input_then_input_size_as_greedy():
    sizes = {File("a", temp=True): 100, File("b"): 500, File("c"): 10}
    a, b, c = list(sizes)
    jobs = [
        FakeJob("big-input", 0, {"_cores": 1}, [b]),
        FakeJob("temp-input", 0, {"_cores": 1}, [a]),
        FakeJob("urgent", 5, {"_cores": 1}, [c]),
        FakeJob("plain", 0, {"_cores": 1}, [c]),
    ]
    for cores, names in [(1, {"urgent"}), (2, {"urgent", "temp-input"})]:
        got = incremental().select_jobs(set(jobs), [], {"_cores": cores}, sizes)
        assert {j.name for j in got} == names
        expected = greedy().select_jobs(set(jobs), [], {"_cores": cores}, sizes)
        assert {j.name for j in expected} == names
    got = incremental(omit_prioritize_by_temp_and_input=True).select_jobs(
        set(jobs), [], {"_cores": 1}, sizes
    )
    assert [j.name for j in got] == ["urgent"]


def test_a_round_reads_only_the_new_jobs():
    """Why (issue 17): greedy re-weights every ready job in every round (O(n) per round,
    O(n^2) per run); here each job's resources are read once, when it becomes ready."""
    jobs = {FakeJob(f"j{i}", 0, {"_cores": 1, "_job_count": 1}) for i in range(200)}
    rounds = 40  # greedy: at least 40 x 120 = 4800 reads, 24 times the 200 here

    def run(scheduler: Any) -> int:
        ready = set(jobs)
        FakeJob.reads = 0
        for _ in range(rounds):
            got = scheduler.select_jobs(set(ready), [], free(2), defaultdict(int))
            assert len(got) == 2
            ready -= set(got)
        return FakeJob.reads

    assert run(incremental()) == len(jobs)
    assert run(greedy()) >= rounds * (len(jobs) - 2 * rounds)


def test_max_jobs_per_timespan_and_custom_resources_are_respected():
    jobs = {FakeJob(f"j{i}", 0, {"_cores": 1, "_job_count": 1, "gpu": 1}) for i in range(10)}
    got = incremental().select_jobs(jobs, [], free(8, gpu=5) | {"_job_count": 3}, {})
    assert len(got) == 3
    got = incremental().select_jobs(jobs, [], free(8, gpu=2), {})
    assert len(got) == 2
    assert incremental().select_jobs(jobs, [], free(0, gpu=2), {}) == []


def test_jobs_that_left_the_ready_set_are_not_selected_and_restarts_are():
    a, b, c = (FakeJob(n, p, {"_cores": 1}) for n, p in [("a", 3), ("b", 2), ("c", 1)])
    s = incremental()
    assert s.select_jobs({a, b, c}, [], {"_cores": 1}, {}) == [a]
    # b left the ready set without this scheduler selecting it (e.g. the greedy fallback).
    assert s.select_jobs({c}, [], {"_cores": 1}, {}) == [c]
    # a failed and is restarted: it is ready again.
    assert s.select_jobs({a, b}, [], {"_cores": 2}, {}) == [a, b]
    assert s.select_jobs(set(), [], {"_cores": 2}, {}) == []


def test_after_the_reports_end_the_ready_set_is_compared_again():
    """While jobs_became_ready reports every new job, equal sizes of queues and ready set mean
    equal sets; once the reports end (reports_ended: _rounds handed its loop back), a job that
    became ready unreported is found, even where another left the ready set unselected."""
    a, b, c = (FakeJob(n, p, {"_cores": 1}) for n, p in [("a", 3), ("b", 2), ("c", 1)])
    s = incremental()
    s.jobs_became_ready({a, b})
    assert s.select_jobs({a, b}, [], {"_cores": 0}, {}) == []  # both queued, none fits
    s.reports_ended()
    # b left unselected, c arrived unreported: sizes are equal, the sets are not.
    assert s.select_jobs({a, c}, [], {"_cores": 2}, {}) == [a, c]


def test_non_integer_resources_fall_back_to_greedy():
    jobs = {FakeJob("x", 0, {"_cores": 1, "mem": "4 GB"})}
    assert incremental().select_jobs(jobs, [], {"_cores": 2, "mem": 100}, {}) is None


class GrowingDAG:
    """Snakemake's DAG changes its length only when its structure changes (checkpoints)."""

    def __init__(self) -> None:
        self.size = 3

    def __len__(self) -> int:
        return self.size


def test_a_dag_update_reweighs_the_ready_jobs():
    a, b = FakeJob("a", 1, {"_cores": 1}), FakeJob("b", 2, {"_cores": 1})
    dag = GrowingDAG()
    s = Scheduler(dag, SchedulerSettings(), LOG)
    assert s.select_jobs({a, b}, [], {"_cores": 1}, {}) == [b]
    c = FakeJob("c", 0, {"_cores": 1})
    a._priority = 9  # a checkpoint's new jobs: Snakemake recomputes every priority
    dag.size = 5
    assert s.select_jobs({a, c}, [], {"_cores": 1}, {}) == [a]


@settings(max_examples=examples(60), deadline=None)
@given(
    shapes=st.lists(shape_st, min_size=1, max_size=25),
    rounds=st.lists(
        st.tuples(
            st.integers(0, 8),
            st.integers(0, 6000),
            st.integers(0, 6),
            st.integers(0, 2),
            st.booleans(),
        ),
        min_size=1,
        max_size=8,
    ),
)
def test_with_reports_of_new_jobs_it_still_selects_what_greedy_selects(shapes, rounds):
    """The patched Snakemake (upstream/snakemake) reports the jobs that became ready
    (jobs_became_ready); a round then works on those alone. Jobs also leave the ready set
    without being selected (a DAG update, another scheduler's pick), and rounds pass with
    nothing to select (reports add up): the choices stay greedy's."""
    priorities = iter(range(10_000, 0, -7))
    ready = {FakeJob(f"j{i}", next(priorities), r) for i, r in enumerate(shapes)}
    mine, theirs = incremental(), greedy()
    mine.jobs_became_ready(set(ready))
    added = len(shapes)
    for cores, mem, arriving, leaving, skip in rounds:
        for job in sorted(ready, key=lambda j: j.name)[:leaving]:
            ready.discard(job)
        resources = free(cores, mem_mb=mem)
        if skip:  # Snakemake skipped selecting this round (no cores): the report waits
            arrivals = set()
        else:
            expected = theirs.select_jobs(set(ready), [], dict(resources), defaultdict(int))
            got = mine.select_jobs(set(ready), [], dict(resources), defaultdict(int))
            assert set(got) == set(expected)
            ready -= set(got)
            arrivals = set()
        for i in range(arriving):  # dependents become ready
            arrivals.add(FakeJob(f"n{added + i}", next(priorities), shapes[i % len(shapes)]))
        added += arriving
        ready |= arrivals
        mine.jobs_became_ready(arrivals)


class WatchedSet(set):
    """A ready set that counts the walks over all of it (iteration, set difference)."""

    walks = 0

    def __iter__(self) -> Any:
        WatchedSet.walks += 1
        return super().__iter__()

    def __sub__(self, other: Any) -> Any:
        WatchedSet.walks += 1
        return set.difference(self, other)


class WatchedKeys:
    """The queued jobs as the scheduler sees them (``known()``), counting walks over them."""

    def __init__(self, live: dict) -> None:
        self.live = live

    def __contains__(self, job: Any) -> bool:
        return job in self.live

    def __len__(self) -> int:
        return len(self.live)

    def __iter__(self) -> Any:
        WatchedSet.walks += 1
        return iter(self.live)


def test_with_reports_a_round_does_not_walk_the_ready_set():
    """Why (issue 17, 150,000 jobs): a round that takes the difference between all ready
    jobs and the queued ones costs O(ready jobs): 100 ms per job at 150,000 (also
    ``new - queued.keys()``, which walks every key)."""
    jobs = {FakeJob(f"j{i}", i, {"_cores": 1, "_job_count": 1}) for i in range(1000)}
    s = incremental()
    s._queues.known = lambda: WatchedKeys(s._queues._live)  # type: ignore[method-assign]
    s.jobs_became_ready(jobs)
    ready = WatchedSet(jobs)
    first = s.select_jobs(ready, [], free(2), defaultdict(int))  # the first round syncs
    assert len(first) == 2
    ready -= set(first)  # Snakemake runs them: they leave the ready set
    WatchedSet.walks = 0
    for n in range(50):
        got = s.select_jobs(ready, [], free(2), defaultdict(int))
        assert len(got) == 2
        ready -= set(got)
        new = {FakeJob(f"n{n}", -1, {"_cores": 1, "_job_count": 1})}
        ready |= new
        s.jobs_became_ready(new)
    assert WatchedSet.walks == 0
