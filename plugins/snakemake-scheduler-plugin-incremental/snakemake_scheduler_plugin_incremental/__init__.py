"""``snakemake --scheduler incremental``: the greedy scheduler's choices, kept incrementally.

The thin plugin entry: Snakemake finds ``Scheduler`` and ``SchedulerSettings`` here. The
queues live in ``_queues`` (a pure core with unit tests).
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from snakemake_interface_common.io import AnnotatedStringInterface
from snakemake_interface_scheduler_plugins.base import SchedulerBase
from snakemake_interface_scheduler_plugins.interfaces.jobs import JobSchedulerInterface
from snakemake_interface_scheduler_plugins.settings import SchedulerSettingsBase

from . import _rounds
from ._queues import ReadyQueues, UnsupportedResources

__all__ = ["Scheduler", "SchedulerSettings"]


@dataclass
class SchedulerSettings(SchedulerSettingsBase):
    omit_prioritize_by_temp_and_input: bool = field(
        default=False,
        metadata={
            "help": "As --scheduler-greedy-omit-prioritize-by-temp-and-input: rank ready jobs "
            "by priority alone, not also by the size of their temporary and other input files.",
        },
    )
    snakemake_rounds: bool = field(
        default=False,
        metadata={
            "help": "Keep Snakemake's own per-round selection step, which validates and sizes "
            "the inputs of every ready job and lists every remaining job in every round "
            "(the plugin otherwise does that for the newly ready jobs only, on the Snakemake "
            "it was written against).",
        },
    )
    snakemake_loop: bool = field(
        default=False,
        metadata={
            "help": "Keep Snakemake's own schedule loop, which copies the ready jobs and "
            "resets each of them in every round (the plugin otherwise goes on with the loop "
            "from its second selecting round, working on the jobs that became ready only, "
            "on the Snakemake it was written against).",
        },
    )


class Scheduler(SchedulerBase):
    """Selects what ``--scheduler greedy`` (greediness 1) selects, in O(k log n) per round.

    Snakemake hands over the whole set of ready jobs each round; the jobs not yet queued are
    found with one set difference (C speed) and queued once, with their reward. Jobs that
    left the ready set without being selected here (another scheduler's pick after a
    fallback, a DAG update) are forgotten the same way. Whatever is not plain integers goes
    back to Snakemake's greedy scheduler (``None``), as the plugin interface provides.

    With the patch proposed upstream (upstream/snakemake), Snakemake also says which jobs
    became ready since the last round (:meth:`jobs_became_ready`). Those are queued, and the
    set difference over every ready job is needed only when the queues and the ready set
    differ in size: every job enters the ready set through that report, so after queueing
    it, the ready jobs are a subset of the queued ones, and equal sizes mean equal sets.
    That makes a round O(new jobs + k log n) instead of O(ready jobs).

    On stock Snakemake 9.27.1 the plugin also takes over the scheduler's per-round selection
    step (:mod:`._rounds`: validation, input sizes and the list of remaining jobs for the
    jobs that became ready only), from its second round on, and from the round after that
    goes on with Snakemake's schedule loop itself (``_rounds.RoundLoop``), which then reports
    the new ready jobs as the patched Snakemake does; on another Snakemake both stay
    Snakemake's.
    """

    def __post_init__(self) -> None:
        settings: Any = self.settings
        self._omit_inputs = bool(getattr(settings, "omit_prioritize_by_temp_and_input", False))
        self._input_sizes: Mapping[Any, Any] = {}
        self._queues = ReadyQueues(reward=self._reward, weights=_weights)
        self._dag_size: Optional[int] = _size(self.dag)
        # Whether Snakemake reports new ready jobs, and what it reported since the last
        # selection.
        self._reporting = False
        self._became_ready: set[Any] = set()
        self._rounds: Optional[bool] = None  # whether _rounds took over (None: not tried)

    def jobs_became_ready(self, jobs: Iterable[Any]) -> None:
        """Snakemake (patched, see the class) reports the jobs that became ready since the
        last round, before every round. Reports add up until the next selection (a round
        may end before it selects)."""
        self._reporting = True
        self._became_ready.update(jobs)

    def reports_ended(self) -> None:
        """The reports of :meth:`jobs_became_ready` stop (``_rounds`` handed its loop back to
        Snakemake's): from the next round the ready set is compared with the queues again."""
        self._reporting = False
        self._became_ready = set()

    def dag_updated(self) -> None:
        # Priorities may have changed: queue everything afresh on the next round.
        self._queues.reset(self._queues.names)

    def select_jobs(
        self,
        selectable_jobs: Sequence[JobSchedulerInterface],
        remaining_jobs: Sequence[JobSchedulerInterface],
        available_resources: Mapping[str, Union[int, str]],
        input_sizes: dict[AnnotatedStringInterface, int],
    ) -> Optional[Sequence[JobSchedulerInterface]]:
        if self._rounds is None:
            keep = bool(getattr(self.settings, "snakemake_rounds", False))
            self._rounds = False if keep else self._take_over_rounds()
        queues = self._queues
        self._input_sizes = input_sizes
        names = tuple(available_resources)
        dag_size = _size(self.dag)
        if names != queues.names or dag_size != self._dag_size:
            # New resources, or the DAG changed (a checkpoint's jobs were added: Snakemake
            # 9 does not call dag_updated, and recomputes every priority): weigh every
            # ready job afresh, once.
            queues.reset(names)
            self._dag_size = dag_size
        ready = (
            selectable_jobs
            if isinstance(selectable_jobs, (set, frozenset))
            else set(selectable_jobs)
        )
        reported, self._became_ready = self._became_ready, set()
        try:
            if self._reporting and len(queues):
                # Only what is new (see the class): the reported jobs still ready and not
                # queued. One membership test each: no set operation with the queues' keys
                # (``set - dict_keys`` walks all of the keys, 150,000 per round).
                known = queues.known()
                for job in reported:
                    if job in ready and job not in known:
                        queues.add(job)
            if not self._reporting or len(queues) != len(ready):
                self._sync(ready)
            return queues.select(available_resources)
        except (UnsupportedResources, KeyError, TypeError) as e:
            self.logger.debug(f"scheduler incremental: falling back to greedy ({e})")
            queues.reset(names)
            return None

    def _take_over_rounds(self) -> bool:
        """Install :mod:`._rounds` on the Snakemake scheduler that runs this plugin."""
        workflow = getattr(self.dag, "workflow", None)
        scheduler = getattr(workflow, "scheduler", None)
        if scheduler is None or getattr(scheduler, "_scheduler", None) is not self:
            return False
        keep_loop = bool(getattr(self.settings, "snakemake_loop", False))
        installed = _rounds.install(scheduler, loop=not keep_loop)
        loop = installed and getattr(scheduler.job_selector, "loop", False)
        self.logger.debug(
            f"scheduler incremental: per-round selection step taken over: {installed}; "
            f"the schedule loop from the next round: {loop}"
        )
        return installed

    def _sync(self, ready: Any) -> None:
        """Make the queues hold exactly the ready jobs: one set difference each way, O(ready
        jobs) (every round without reports; with them, after a reset or a DAG update)."""
        queues = self._queues
        known = queues.known()
        new = ready - known
        if len(ready) - len(new) != len(queues):
            # Some queued jobs are no longer ready (selected by the fallback, dropped by a
            # DAG update): forget them.
            for job in known - ready:
                queues.discard(job)
        for job in new:
            queues.add(job)

    def _reward(self, job: Any) -> tuple[Any, ...]:
        """The greedy scheduler's reward (snakemake/scheduling/greedy.py, job_reward)."""
        if self._omit_inputs:
            return (job.priority,)
        sizes = self._input_sizes
        return (
            job.priority,
            sum(sizes[f] or 0 for f in job.input if f.is_flagged("temp")),
            sum(sizes[f] or 0 for f in job.input),
        )


def _weights(job: Any) -> Mapping[str, Any]:
    return job.scheduler_resources


def _size(dag: Any) -> Optional[int]:
    """The DAG's job count (Snakemake's DAG changes it only when its structure changes)."""
    try:
        return len(dag)
    except TypeError:
        return None
