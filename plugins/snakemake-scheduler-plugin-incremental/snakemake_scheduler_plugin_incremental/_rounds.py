"""Snakemake's per-round job selection, without its walks over every ready job.

The one place this plugin reaches into Snakemake's ``JobScheduler`` (the rest of the plugin
sees only what the scheduler plugin interface hands it). Every scheduling round, stock
Snakemake's ``JobScheduler.job_selector`` validates every ready job (a cached no-op after a
job's first round), gathers the size of every input of every ready job (a set of all their
paths, an ``exists()`` and a ``size()`` per path, in a new event loop) and builds the list of
every job of the DAG not yet finished (``remaining_jobs``), which the greedy and incremental
schedulers never read. With n ready jobs that is O(n) Python work per round, one round per
finished job: O(n^2) per run (docs/scale.md).

:class:`RoundSelector` does what it does, for the jobs that became ready since it last saw
them: it validates them and sizes their inputs once (a job's inputs exist, complete, once it
is ready), keeps the sizes of the other ready jobs' inputs, and hands the scheduler plugin a
lazy ``remaining_jobs`` that is computed only if read (Snakemake's ILP scheduler reads it).
The rate limit (``--max-jobs-per-timespan``) is applied as Snakemake applies it. This is
items 1 and 2 of the patch proposed upstream (upstream/snakemake), done from the plugin: it is
installed only on the Snakemake whose ``job_selector`` and ``update_input_sizes`` it was
written against (their source's digest), and the scheduler stays Snakemake's own otherwise.

What is left per round is in ``JobScheduler.schedule``'s loop itself: it copies the DAG's
ready set twice (``set(list(...))``) and resets the params and resources of every ready job
(a no-op after a job's first round) before every selection: O(ready jobs) per round, about
0.3 us per ready job per round while 150,000 are ready (docs/scale.md). A plugin cannot
replace that loop while it runs, so :class:`RoundLoop` goes on with it from inside the
selection: on the first round :class:`RoundSelector` selects in, it starts the selected jobs
as the loop would and runs the following rounds itself, each as Snakemake's loop runs it
except that it works on the DAG's ready set itself (no copy) and on the jobs added to it
since the last round (:class:`TrackedReadySet` records them: the remaining item of the
upstream patch, ``take_newly_ready``). When the run ends or stops (all jobs done, an error,
a kill), it hands the round back to Snakemake's loop with nothing selected, and Snakemake's
own code ends the run, as it would have. Entered only on the Snakemake whose ``schedule``
and whose every function touching the ready set it was written against.
"""

import asyncio
import hashlib
import inspect
import logging
import sys
from collections.abc import Iterator, Sequence
from collections.abc import Set as AbstractSet
from itertools import filterfalse
from typing import Any

_SNAKEMAKE_LOG = logging.getLogger("snakemake.logging")
"""Snakemake's logger (``snakemake.logging.logger``), where its job scheduler logs."""

KNOWN_SOURCES = {
    "job_selector": "11a654075403acf2",
    "update_input_sizes": "3d3d19efdbbe3267",
}
"""Digests (sha256 of ``inspect.getsource``, 16 hex digits) of the methods replaced, as in
Snakemake 9.27.1; ``tests/unit/test_snakemake_internals.py`` checks them against the installed
Snakemake."""

LOOP_SOURCES = {
    "JobScheduler.schedule": "9f32db93a39bd96f",
    "JobScheduler._handle_error": "255b52a98a346275",
    "DAG.ready_jobs": "ec3031bd36438f88",
    "DAG.update_needrun": "2cc7fc0714165cf3",
    "DAG.update_ready": "1d3a023d4b85a70c",
    "DAG.register_running": "ce7f26a4defeb2c3",
    "DAG.finish": "f857623aad45c08c",
    "DAG.delete_job": "1b3a6f4a0bd8eda1",
}
"""What :class:`RoundLoop` mirrors (``schedule``) and every function of Snakemake 9.27.1 that
touches the DAG's ready set (``_ready_jobs``: each changes it through ``add``, ``update``,
``remove``, ``clear`` or ``-=``, which :class:`TrackedReadySet` sees), with their digests;
``tests/unit/test_snakemake_internals.py`` checks them, and that no other function of the
installed Snakemake mentions ``_ready_jobs``."""


def source_digest(function: Any) -> str:
    try:
        source = inspect.getsource(function)
    except (OSError, TypeError):
        return ""
    return hashlib.sha256(source.encode()).hexdigest()[:16]


def replaceable(scheduler: Any) -> bool:
    """Whether ``scheduler``'s class has the methods this module was written against."""
    kind = type(scheduler)
    return all(
        source_digest(getattr(kind, name, None)) == digest for name, digest in KNOWN_SOURCES.items()
    )


def install(scheduler: Any, loop: bool = True) -> bool:
    """Replace ``scheduler.job_selector`` (this instance's only) by a :class:`RoundSelector`;
    False, and nothing changed, where its Snakemake is not the one it was written against.
    ``loop``: let it go on with the schedule loop (:class:`RoundLoop`) where that loop and
    the ready set's users are the ones it was written against."""
    if isinstance(getattr(scheduler, "job_selector", None), RoundSelector):
        return True
    if not replaceable(scheduler):
        return False
    selector = RoundSelector(scheduler)
    selector.loop = loop and loop_replaceable(scheduler)
    scheduler.job_selector = selector
    return True


def _function(owner: Any, name: str) -> Any:
    found = getattr(owner, name, None)
    return found.fget if isinstance(found, property) else found


def loop_replaceable(scheduler: Any) -> bool:
    """Whether :class:`RoundLoop` may go on with ``scheduler``'s schedule loop: the loop and
    every function touching the DAG's ready set are the ones it was written against, the DAG's
    ready set is a plain set, and the run is one whose rounds select (not a dry run, no
    ``--scheduler-subsample``)."""
    dag = getattr(getattr(scheduler, "workflow", None), "dag", None)
    if getattr(scheduler, "dryrun", True) or getattr(scheduler, "subsample", None):
        return False
    if type(getattr(dag, "_ready_jobs", None)) is not set:
        return False
    return loop_digests(type(scheduler), type(dag)) == LOOP_SOURCES


def loop_digests(job_scheduler: type, dag: type) -> dict[str, str]:
    """The digests of :data:`LOOP_SOURCES`' functions in these ``JobScheduler`` and ``DAG``
    classes."""
    owners = {"JobScheduler": job_scheduler, "DAG": dag}
    found = {}
    for qualified in LOOP_SOURCES:
        owner, name = qualified.split(".")
        found[qualified] = source_digest(_function(owners[owner], name))
    return found


class RoundSelector:
    """``JobScheduler.job_selector`` (Snakemake 9.27.1) with the work per round proportional
    to the jobs that became ready since the last round, not to all ready jobs."""

    prune_at = 10000
    """Input sizes kept before the first prune (Snakemake's own threshold)."""

    def __init__(self, scheduler: Any) -> None:
        self.scheduler = scheduler
        self.seen: set[Any] = set()
        """Ready jobs validated and sized already."""
        self.pruned_at = 0
        self.loop = False
        """Whether to go on with the schedule loop (:class:`RoundLoop`) from the next call."""
        self.told = False
        """Whether every job that enters the ready set is in ``new`` (in :class:`RoundLoop`),
        so that the scheduler plugin can be told about them (its ``jobs_became_ready``)."""

    def __call__(self, jobs: Any) -> Any:
        ready = jobs if isinstance(jobs, (set, frozenset)) else set(jobs)
        new = ready - self.seen  # C speed: a set difference
        if new and len(self.seen) > 2 * len(ready) + self.prune_at:
            self.seen &= ready  # left the ready set: a job that comes back is new again
        self.seen |= new
        selected = self.select(jobs, new)
        if not self.loop:
            return selected
        # Go on with Snakemake's loop from here (once), then hand this round back with
        # nothing selected: Snakemake's loop sees the end (or the stop) and handles it.
        self.loop = False
        _SNAKEMAKE_LOG.debug("scheduler incremental: the schedule loop goes on from this round")
        RoundLoop(self.scheduler, self).run(selected)
        _SNAKEMAKE_LOG.debug("scheduler incremental: the schedule loop handed back")
        # Should Snakemake's loop select again (it does not on 9.27.1: it hands back only what
        # ends or stops the run), every ready job is new to this step, and the plugin no
        # longer hears of every job that becomes ready.
        self.told = False
        self.seen.clear()
        ended = getattr(self.scheduler._scheduler, "reports_ended", None)
        if ended is not None:
            ended()
        self.scheduler._open_jobs.release()  # the wake-up RoundLoop took to see the end
        return set()

    def select(self, jobs: Any, new: Any) -> Any:
        """Snakemake's ``job_selector`` for the ready ``jobs`` of which ``new`` became ready
        since the last round (validated and sized here; the scheduler plugin told, if it
        listens: ``jobs_became_ready``)."""
        s = self.scheduler
        keep_restarted(getattr(s.workflow, "dag", None))
        for job in new:
            s.validate_job(job)
        if new:
            s.workflow.async_run(self.size_inputs(new, jobs))
        became_ready = getattr(s._scheduler, "jobs_became_ready", None) if self.told else None
        if became_ready is not None:
            became_ready(new)

        def run_selector(job_selector: Any) -> Any:
            with s._lock:
                if s.resources["_cores"] == 0:
                    return []
                remaining = RemainingJobs(s)
                selected = job_selector(jobs, remaining, s.resources, s._input_sizes)
                if selected is None:
                    selected = s.job_selector_greedy(jobs, remaining, s.resources, s._input_sizes)
                s.update_available_resources(selected)
            return selected

        # What Snakemake does with the rate limit, unchanged.
        if s.job_rate_limiter is None:
            assert s.resources["_job_count"] == sys.maxsize, (
                f"Job count is {s.resources['_job_count']}, but should be {sys.maxsize}"
            )
            return run_selector(s._job_selector)
        n_free_jobs = s.job_rate_limiter.get_free_jobs()
        if n_free_jobs == 0:
            _SNAKEMAKE_LOG.info("Job rate limit reached, waiting for free slots.")
            return set()
        s.resources["_job_count"] = n_free_jobs
        selected = run_selector(s._job_selector)
        s.job_rate_limiter.register_jobs(len(selected))
        return selected

    async def size_inputs(self, new: Any, ready: Any) -> None:
        """Snakemake's ``update_input_sizes`` for the new jobs' inputs; the sizes of every
        ready job's inputs are kept (pruned against them when the table has doubled)."""
        sizes = self.scheduler._input_sizes

        async def get_size(path: Any) -> tuple[Any, Any]:
            return path, await path.size() if await path.exists() else None

        paths = {path for job in new for path in job.input}
        if paths:
            sizes.update(await asyncio.gather(*[get_size(path) for path in paths]))
        if len(sizes) > max(self.prune_at, 2 * self.pruned_at):
            needed = {path for job in ready for path in job.input}
            for path in list(filterfalse(needed.__contains__, sizes)):
                del sizes[path]
            self.pruned_at = len(sizes)


def keep_restarted(dag: Any) -> None:
    """Keep a job that ``--retries`` restarts through the DAG's next update.

    Snakemake 9.27.1's ``JobScheduler._handle_error`` puts a job it restarts back into the
    DAG's ready set but leaves it in the DAG's running set (``DAG._running``; only the
    scheduler's own ``running`` forgets it). A checkpoint that finishes before the retry is
    selected updates the DAG, which rebuilds the ready set without the jobs it believes are
    running: the retry is lost, and the run ends "At least one job did not complete" with
    retries left (any scheduler; whether a retry waits that long depends on ties and timing).
    A job cannot be ready and running at once, so every job in both is such a retry, and it
    leaves the running set here, in the round after its restart (before the next round
    finishes jobs): O(running jobs) per round."""
    running = getattr(dag, "_running", None)
    ready = getattr(dag, "_ready_jobs", None)
    if not running or not ready:
        return
    for job in [job for job in running if job in ready]:
        running.discard(job)


class RemainingJobs(Sequence[Any]):
    """``JobScheduler.remaining_jobs`` (every unfinished job of the DAG), computed only if a
    scheduler reads it."""

    def __init__(self, scheduler: Any) -> None:
        self._scheduler = scheduler
        self._jobs: Any = None

    def _get(self) -> Any:
        if self._jobs is None:
            self._jobs = self._scheduler.remaining_jobs
        return self._jobs

    def __getitem__(self, index: Any) -> Any:
        return self._get()[index]

    def __len__(self) -> int:
        return len(self._get())

    def __iter__(self) -> Iterator[Any]:
        return iter(self._get())

    def __contains__(self, job: object) -> bool:
        return job in self._get()


class TrackedReadySet(set[Any]):
    """The DAG's ready set, recording every job added to it (by ``add``, ``update``, ``|=``
    or a symmetric difference: whatever Snakemake's code calls) until :meth:`take_added`.
    Removals need no record: a round intersects what was added with what is still ready."""

    __slots__ = ("_added",)

    def __init__(self, jobs: Any = ()) -> None:
        super().__init__(jobs)
        self._added: set[Any] = set()

    def add(self, job: Any) -> None:
        set.add(self, job)
        self._added.add(job)

    def update(self, *others: Any) -> None:
        for other in others:
            jobs = other if isinstance(other, (set, frozenset)) else list(other)
            set.update(self, jobs)
            self._added.update(jobs)

    def __ior__(self, other: AbstractSet[Any]) -> "TrackedReadySet":  # type: ignore[misc]
        if not isinstance(other, (set, frozenset)):
            return NotImplemented
        self.update(other)
        return self

    def symmetric_difference_update(self, other: Any) -> None:
        jobs = set(other)
        self._added.update(jobs - self)
        set.symmetric_difference_update(self, jobs)

    def __ixor__(self, other: AbstractSet[Any]) -> "TrackedReadySet":  # type: ignore[misc]
        if not isinstance(other, (set, frozenset)):
            return NotImplemented
        self.symmetric_difference_update(other)
        return self

    def take_added(self) -> set[Any]:
        """The jobs added since the last call (some may have left again), forgotten here."""
        added, self._added = self._added, set()
        return added


class RoundLoop:
    """The rest of ``JobScheduler.schedule``'s loop (Snakemake 9.27.1), run from inside a
    selection (see the module). Each round is Snakemake's, in its order, with three
    differences: the DAG's ready set itself stands for the copy (it changes only in this
    thread, in ``_finish_jobs``, ``_error_jobs`` and ``register_running``, as in Snakemake),
    only the jobs added to it since the last round are reset, validated and sized (a job's
    reset and validation are no-ops after its first round), and the round hands back to
    Snakemake's loop instead of ending the run, stopping it or erroring out."""

    def __init__(self, scheduler: Any, selector: RoundSelector) -> None:
        from snakemake.settings.types import SharedFSUsage
        from snakemake_interface_logger_plugins.common import LogEvent

        self.scheduler = scheduler
        self.selector = selector
        self._local_copies = SharedFSUsage.STORAGE_LOCAL_COPIES
        self._job_started = LogEvent.JOB_STARTED
        dag = scheduler.workflow.dag
        self.ready = TrackedReadySet(dag._ready_jobs)
        dag._ready_jobs = self.ready
        selector.told = True

    def run(self, run: Any) -> None:
        """Start ``run`` (the current round's selection), then go on round after round until
        one is for Snakemake's loop to handle (the run ends or stops); that round's wake-up is
        taken: the caller gives it back."""
        while True:
            self.start(run)
            run = self.next_round()
            if run is None:
                return

    def next_round(self) -> Any:
        """Wait for a wake-up, then what Snakemake's loop does up to the selection; None
        where the round ends the run, stops it, or reports an error (Snakemake's loop does
        that, seeing the same state: it changes only in this thread)."""
        s = self.scheduler
        dag = s.workflow.dag
        while True:
            if dag.queue_input_jobs:
                s.update_queue_input_jobs()
            s._open_jobs.acquire()
            with s._lock:
                s._finish_jobs()
                s._error_jobs()
                ready = dag._ready_jobs
                running = bool(s.running)
                errors = s._errors
                executor_error = s._executor_error
                user_kill = s._user_kill
            if ready is not self.ready:
                return None  # replaced (not by Snakemake 9.27.1): Snakemake's loop goes on
            if user_kill or (not s.keepgoing and errors) or executor_error:
                return None
            if not ready:
                queued = dag.has_unfinished_queue_input_jobs()
                if (
                    not running or s.workflow.remote_execution_settings.immediate_submit
                ) and not queued:
                    return None  # the end of the run
                if queued:
                    _SNAKEMAKE_LOG.info("Waiting for queue input...")
                    s._schedule_reevalutation(s.workflow.execution_settings.queue_input_wait_time)
                continue
            new = self.ready.take_added() & ready
            for job in new:
                job.reset_params_and_resources()
            if _SNAKEMAKE_LOG.isEnabledFor(logging.DEBUG):
                _SNAKEMAKE_LOG.debug(f"Resources before job selection: {s.resources}")
                _SNAKEMAKE_LOG.debug(f"Ready jobs: {len(ready)}")
            if not s._last_job_selection_empty:
                _SNAKEMAKE_LOG.info("Select jobs to execute...")
            run = self.selector.select(ready, new)
            s._last_job_selection_empty = not run
            if _SNAKEMAKE_LOG.isEnabledFor(logging.DEBUG):
                _SNAKEMAKE_LOG.debug(f"Selected jobs: {len(run)}")
                _SNAKEMAKE_LOG.debug(f"Resources after job selection: {s.resources}")
            return run

    def start(self, run: Any) -> None:
        """What Snakemake's loop does with a round's selection (not a dry run)."""
        s = self.scheduler
        workflow = s.workflow
        with s._lock:
            s.running.update(run)
            workflow.dag.register_running(set(run))
        if run:
            _SNAKEMAKE_LOG.info(
                f"Execute {len(run)} jobs...",
                extra=dict(event=self._job_started, jobs=[j.jobid for j in run]),
            )
            local_runjobs = [job for job in run if job.is_local]
            runjobs = [job for job in run if not job.is_local]
            if local_runjobs:
                if workflow.remote_execution_settings.immediate_submit:
                    _SNAKEMAKE_LOG.warning(
                        "The following local rules cannot run when the "
                        "--immediate-submit flag is specified. Skipping: "
                        f"{', '.join(j.name for j in local_runjobs)}."
                    )
                else:
                    if not s.touch and not workflow.subprocess_exec:
                        workflow.async_run(
                            workflow.dag.retrieve_storage_inputs(
                                jobs=local_runjobs, also_missing_internal=True
                            )
                        )
                    s.run(local_runjobs, executor=s._local_executor or s._executor)
            if runjobs:
                is_shared_fs = self._local_copies in workflow.storage_settings.shared_fs_usage
                if (workflow.is_main_process and is_shared_fs) or (
                    not is_shared_fs and workflow.remote_exec
                ):
                    workflow.async_run(
                        workflow.dag.retrieve_storage_inputs(
                            jobs=runjobs, also_missing_internal=True
                        )
                    )
                s.run(runjobs)
        if s._run_performed is None or s._run_performed:
            if s.running:
                _SNAKEMAKE_LOG.debug("Waiting for running jobs to complete.")
            else:
                _SNAKEMAKE_LOG.debug("Waiting for more resources.")
        if s.job_rate_limiter is not None:
            s._schedule_reevalutation(s.job_rate_limiter.timespan)
