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
"""

import asyncio
import hashlib
import inspect
import logging
import sys
from collections.abc import Iterator, Sequence
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


def install(scheduler: Any) -> bool:
    """Replace ``scheduler.job_selector`` (this instance's only) by a :class:`RoundSelector`;
    False, and nothing changed, where its Snakemake is not the one it was written against."""
    if isinstance(getattr(scheduler, "job_selector", None), RoundSelector):
        return True
    if not replaceable(scheduler):
        return False
    scheduler.job_selector = RoundSelector(scheduler)
    return True


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

    def __call__(self, jobs: Any) -> Any:
        s = self.scheduler
        ready = jobs if isinstance(jobs, (set, frozenset)) else set(jobs)
        new = ready - self.seen  # C speed: a set difference
        for job in new:
            s.validate_job(job)
        if new:
            s.workflow.async_run(self.size_inputs(new, ready))
            if len(self.seen) > 2 * len(ready) + self.prune_at:
                self.seen &= ready  # left the ready set: a job that comes back is new again
            self.seen |= new

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
