"""The per-round selection step the plugin takes over from Snakemake (_rounds): the same
validation, input sizes, remaining jobs and rate limit as Snakemake's job_selector, for the
jobs that became ready since the last round only."""

import sys
import threading
from types import SimpleNamespace

import pytest

from snakemake_scheduler_plugin_incremental import _rounds


class _Path(str):
    """An input file as the selector sees it (Snakemake's _IOFile: async exists and size)."""

    stats: list[str] = []

    async def exists(self) -> bool:
        _Path.stats.append(str(self))
        return not self.startswith("missing")

    async def size(self) -> int:
        return len(self)


class _Job:
    def __init__(self, name: str, *inputs: str) -> None:
        self.name = name
        self.input = [_Path(i) for i in inputs]

    def __repr__(self) -> str:
        return self.name


class _Scheduler:
    """What _rounds uses of Snakemake's JobScheduler."""

    def __init__(self, limiter=None) -> None:
        self.validated: list[str] = []
        self.remaining_reads = 0
        self.seen_args: list[tuple] = []
        self._lock = threading.Lock()
        self.resources = {"_cores": 2, "_job_count": sys.maxsize}
        self._input_sizes: dict = {}
        self.job_rate_limiter = limiter
        self.workflow = SimpleNamespace(async_run=_run)
        self.job_selector_greedy = lambda *a: ["greedy"]

        def select(jobs, remaining, resources, sizes):
            self.seen_args.append((jobs, remaining, dict(sizes)))
            return sorted(jobs, key=repr)[:1]

        self._job_selector = select

    def validate_job(self, job) -> None:
        self.validated.append(job.name)

    @property
    def remaining_jobs(self):
        self.remaining_reads += 1
        return ["r1", "r2"]

    def update_available_resources(self, selected) -> None:
        self.resources["_cores"] -= len(selected)


def _run(coroutine):
    import asyncio

    return asyncio.run(coroutine)


def test_only_new_jobs_are_validated_and_sized_and_the_old_sizes_kept():
    s = _Scheduler()
    select = _rounds.RoundSelector(s)
    a, b = _Job("a", "in/x", "in/shared"), _Job("b", "in/y", "in/shared")
    _Path.stats = []
    assert select({a, b}) == [a]
    assert sorted(s.validated) == ["a", "b"] and sorted(_Path.stats) == [
        "in/shared",
        "in/x",
        "in/y",
    ]
    c = _Job("c", "in/z")
    _Path.stats = []
    select({b, c})
    assert sorted(s.validated) == ["a", "b", "c"]  # b not again
    assert _Path.stats == ["in/z"]  # b's inputs are not sized again
    assert s._input_sizes[_Path("in/y")] == 4 and s._input_sizes[_Path("in/z")] == 4
    _Path.stats = []
    select({b, c})  # nothing new: no sizing at all
    assert _Path.stats == []


def test_remaining_jobs_are_computed_only_if_read():
    s = _Scheduler()
    select = _rounds.RoundSelector(s)
    select({_Job("a", "in/x")})
    jobs, remaining, sizes = s.seen_args[-1]
    assert s.remaining_reads == 0
    assert list(remaining) == ["r1", "r2"] and len(remaining) == 2 and "r1" in remaining
    assert s.remaining_reads == 1  # once, then kept


def test_the_greedy_fallback_and_no_free_cores_as_snakemake_does():
    s = _Scheduler()
    s._job_selector = lambda *a: None
    assert _rounds.RoundSelector(s)({_Job("a", "in/x")}) == ["greedy"]
    s = _Scheduler()
    s.resources["_cores"] = 0
    assert _rounds.RoundSelector(s)({_Job("a", "in/x")}) == []


class _Limiter:
    def __init__(self, free: int) -> None:
        self.free = free
        self.registered: list[int] = []

    def get_free_jobs(self) -> int:
        return self.free

    def register_jobs(self, n: int) -> None:
        self.registered.append(n)


def test_the_rate_limit_as_snakemake_applies_it():
    s = _Scheduler(_Limiter(0))
    assert _rounds.RoundSelector(s)({_Job("a", "in/x")}) == set()
    s = _Scheduler(_Limiter(3))
    selected = _rounds.RoundSelector(s)({_Job("a", "in/x")})
    assert len(selected) == 1 and s.resources["_job_count"] == 3
    assert s.job_rate_limiter.registered == [1]


def test_an_unknown_snakemake_keeps_its_own_selection():
    class Other:
        def job_selector(self, jobs):
            return jobs

        async def update_input_sizes(self, jobs):
            return None

    other = Other()
    assert not _rounds.install(other)
    assert not isinstance(other.job_selector, _rounds.RoundSelector)


@pytest.mark.parametrize("n", [10, 40])
def test_sizes_of_jobs_that_left_the_ready_set_are_pruned_when_the_table_doubles(n):
    s = _Scheduler()
    select = _rounds.RoundSelector(s)
    select.prune_at = 4  # a small table
    for i in range(n):
        select({_Job(f"j{i}", f"in/{i}")})
    assert len(s._input_sizes) <= 8
    assert _Path(f"in/{n - 1}") in s._input_sizes


# ---- the schedule loop's ready set (TrackedReadySet) and when the loop may run ------------


def test_the_tracked_ready_set_records_every_way_a_job_is_added():
    ready = _rounds.TrackedReadySet({"old"})
    ready.add("a")
    ready.update(job for job in ["b", "c"])  # a generator, as DAG.update_ready passes
    ready |= {"d"}
    ready ^= {"e", "old"}  # adds e, removes old
    ready.update({"f"}, ["g"])
    assert ready == {"a", "b", "c", "d", "e", "f", "g"}
    assert ready.take_added() == {"a", "b", "c", "d", "e", "f", "g"}
    assert ready.take_added() == set()  # taken


def test_removals_keep_the_tracked_set_and_record_nothing():
    """DAG.register_running's ``-=`` rebinds the attribute to the result: the same object."""
    ready = _rounds.TrackedReadySet({"a", "b", "c"})
    same = ready
    ready -= {"a"}
    ready.remove("b")
    ready.discard("x")
    assert ready is same and ready == {"c"} and ready.take_added() == set()
    ready.clear()
    ready.add("b")  # came back: added again
    assert ready.take_added() == {"b"}
    assert type(ready - {"b"}) is set  # derived sets are plain: only the DAG's own records


def _loop_scheduler(**changes):
    """A JobScheduler (not started) over a DAG class carrying Snakemake's DAG methods that
    touch the ready set: what loop_replaceable looks at."""
    import snakemake.api  # noqa: F401 (Snakemake's modules import in this order)
    from snakemake.dag import DAG
    from snakemake.scheduling.job_scheduler import JobScheduler

    scheduler = object.__new__(JobScheduler)
    users = [name.split(".")[1] for name in _rounds.LOOP_SOURCES if name.startswith("DAG.")]
    dag = type("DAG", (), {name: DAG.__dict__[name] for name in users})()
    dag._ready_jobs = set()
    scheduler.workflow = SimpleNamespace(dag=dag)
    scheduler.dryrun, scheduler.subsample = False, None
    for name, value in changes.items():
        setattr(scheduler, name, value)
    return scheduler


def test_the_loop_runs_only_where_it_was_written_for():
    assert _rounds.loop_replaceable(_loop_scheduler())
    assert not _rounds.loop_replaceable(_loop_scheduler(dryrun=True))
    assert not _rounds.loop_replaceable(_loop_scheduler(subsample=10))
    other = _loop_scheduler()
    other.workflow.dag._ready_jobs = _rounds.TrackedReadySet()  # not Snakemake's plain set
    assert not _rounds.loop_replaceable(other)
    changed = _loop_scheduler()
    type(changed.workflow.dag).finish = lambda self, job: None  # another Snakemake's DAG.finish
    assert not _rounds.loop_replaceable(changed)


def test_a_restarted_job_leaves_the_dags_running_set_when_the_next_round_selects():
    """Snakemake 9.27.1's _handle_error puts a restarted job back into the ready set and
    leaves it in the DAG's running set, where a DAG update would skip it: the selection step
    takes it out of the running set (a job in both is such a retry), and nothing else."""
    retried, running, ready = _Job("retried"), _Job("running"), _Job("ready")
    dag = SimpleNamespace(_running={retried, running}, _ready_jobs={retried, ready})
    s = _Scheduler()
    s.workflow.dag = dag
    select = _rounds.RoundSelector(s)
    select({retried, ready})
    assert dag._running == {running}
    assert dag._ready_jobs == {retried, ready}
    _rounds.keep_restarted(SimpleNamespace())  # not a DAG Snakemake's way: nothing to do
