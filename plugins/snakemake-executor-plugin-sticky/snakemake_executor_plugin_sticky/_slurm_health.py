"""Faults of the cluster itself, as the pilot launcher and the hybrid Slurm jobs see them:
the pure core.

Pilot states come from ``squeue`` (``slurmctld``), which does not need Slurm's accounting
database; ``sacct`` (``slurmdbd`` and its database) is never needed to run pilots. The watch
(one per run, shared by the pilot launcher and the hybrid Slurm jobs' status checks) keeps the
user told, each at most once per outage:

- accounting down (a periodic, bounded ``sacct`` probe fails): one warning that pilots (and
  the run's Slurm jobs) keep running with their states from ``squeue``/``scontrol``, one note
  when it answers again;
- ``squeue`` not answering for longer than a deadline: one warning naming the command and its
  error (the manager keeps the last view meanwhile; connected pilots are still watched by their
  heartbeats, starting ones by the start timeout, so nothing waits forever).

The hybrid Slurm jobs (those of snakemake-executor-plugin-slurm) whose state ``sacct`` does
not give are decided by :class:`SlurmJobsFallback` from ``squeue``/``scontrol``; one that
neither knows any more fails after a deadline, with a message naming it.
"""

import threading
from dataclasses import dataclass
from enum import Enum
from typing import Optional


@dataclass
class SlurmWatch:
    squeue_deadline: float = 60.0
    """Seconds ``squeue`` may fail before the user is told."""
    accounting_every: float = 20.0
    """Seconds between two accounting probes."""
    subjects: str = "pilots"
    """What keeps running when accounting is down, as the warning says it."""

    def __post_init__(self) -> None:
        self.lock = threading.Lock()
        """Held by whoever calls the watch: the launcher's refresh and probe thread, and the
        hybrid status checks (Snakemake's thread)."""
        self._squeue_failing_since: Optional[float] = None
        self._squeue_warned = False
        self._next_probe: Optional[float] = None
        self._probing = False
        self.accounting_down = False
        self.accounting_problem: Optional[str] = None
        """What the last accounting probe said, when it failed."""

    # ---- squeue ------------------------------------------------------------------------------

    def squeue_answered(self) -> Optional[str]:
        """squeue answered; a note if it had been reported failing."""
        was_warned = self._squeue_warned
        self._squeue_failing_since = None
        self._squeue_warned = False
        return "sticky: squeue answers again; pilot states are current" if was_warned else None

    def squeue_failed(self, now: float, error: str) -> Optional[str]:
        """squeue failed; the warning once it has failed for longer than the deadline."""
        if self._squeue_failing_since is None:
            self._squeue_failing_since = now
        failing = now - self._squeue_failing_since
        if self._squeue_warned or failing < self.squeue_deadline:
            return None
        self._squeue_warned = True
        return (
            f"sticky: squeue has not answered for {failing:.0f} s ({error}); pilot states are "
            "those last seen. Connected pilots are still watched by their heartbeats and "
            "starting ones by --sticky-pilot-start-timeout; check slurmctld (scontrol ping)"
        )

    # ---- accounting --------------------------------------------------------------------------

    def probe_due(self, now: float) -> bool:
        """Whether to start an accounting probe now (never two at once)."""
        if self._probing:
            return False
        if self._next_probe is not None and now < self._next_probe:
            return False
        self._probing = True
        return True

    def probe_result(self, now: float, error: Optional[str]) -> Optional[str]:
        """The probe's outcome (None: sacct answered); a warning or note when that changes."""
        self._probing = False
        self._next_probe = now + self.accounting_every
        self.accounting_problem = error
        if error is not None and not self.accounting_down:
            self.accounting_down = True
            return (
                f"sticky: Slurm accounting does not answer ({error}); {self.subjects} keep "
                "running and their states come from squeue/scontrol, which do not need it. "
                "sacct shows nothing of this run until slurmdbd and its database are back"
            )
        if error is None and self.accounting_down:
            self.accounting_down = False
            return "sticky: Slurm accounting answers again (sacct)"
        return None


# ---- hybrid Slurm jobs whose state sacct does not give ----------------------------------------

FAILED_STATES = frozenset(
    {
        "BOOT_FAIL",
        "CANCELLED",
        "DEADLINE",
        "FAILED",
        "NODE_FAIL",
        "OUT_OF_MEMORY",
        "PREEMPTED",
        "TIMEOUT",
    }
)
"""Slurm job states (``squeue %T``, ``scontrol`` ``JobState``) of a job that ended without
success; ``COMPLETED`` is success, every other state is a job still queued, running or ending."""


class Outcome(Enum):
    SUCCESS = "success"
    FAILED = "failed"
    WATCH = "watch"


@dataclass(frozen=True)
class Lookup:
    """What slurmctld said of one Slurm job: its state and which command gave it, or no state
    and what the commands said instead."""

    state: Optional[str]
    source: str = ""
    """``squeue`` or ``scontrol``: the command that gave the state."""
    problem: str = ""
    """Without a state: what the commands answered (e.g. ``scontrol: Invalid job id``)."""


@dataclass(frozen=True)
class Decision:
    outcome: Outcome
    message: str = ""
    """For FAILED: the job's error, naming the Slurm job and why it failed."""


@dataclass
class SlurmJobsFallback:
    """Decides the Slurm jobs of this run whose state ``sacct`` did not give.

    ``COMPLETED`` succeeds, a state in :data:`FAILED_STATES` fails naming it, every other state
    keeps the job watched. A job that neither ``squeue`` nor ``scontrol`` knows (slurmctld
    forgets finished jobs after ``MinJobAge``) stays watched for ``unknown_deadline`` seconds,
    waiting for ``sacct`` to answer again, then fails with a message naming it and what was
    waited for: nothing is watched forever."""

    unknown_deadline: float = 300.0
    """Seconds a job may be unknown to squeue, scontrol and sacct before it counts as failed."""

    def __post_init__(self) -> None:
        self._unknown_since: dict[str, float] = {}

    def decide(self, job_id: str, seen: Lookup, now: float, accounting: str = "") -> Decision:
        """One job's outcome; ``accounting``: what sacct said, for the message."""
        if seen.state:
            self._unknown_since.pop(job_id, None)
            return state_decision(job_id, seen.state, seen.source)
        since = self._unknown_since.setdefault(job_id, now)
        waited = now - since
        if waited < self.unknown_deadline:
            return Decision(Outcome.WATCH)
        del self._unknown_since[job_id]
        said = "; ".join(p for p in (accounting, seen.problem) if p)
        return Decision(
            Outcome.FAILED,
            f"Slurm job {job_id}: no state from sacct, squeue or scontrol for {waited:.0f} s"
            + (f" ({said})" if said else "")
            + "; it counts as failed, its end being unknown. Once Slurm accounting answers, "
            f"look it up (sacct -j {job_id}) and rerun the workflow. ",
        )

    def forget_all_but(self, job_ids: set[str]) -> None:
        """Jobs whose state came from sacct again (or that ended) start afresh."""
        for job_id in set(self._unknown_since) - job_ids:
            del self._unknown_since[job_id]


def state_decision(job_id: str, state: str, source: str) -> Decision:
    """A Slurm job's outcome from its state (``squeue %T`` or ``scontrol`` ``JobState``).

    >>> state_decision("7", "COMPLETED", "squeue").outcome
    <Outcome.SUCCESS: 'success'>
    >>> state_decision("7", "TIMEOUT", "scontrol").message
    'Slurm job 7 ended TIMEOUT (state from scontrol: Slurm accounting gave none). '
    """
    word = state.split()[0] if state.split() else ""
    if word == "COMPLETED":
        return Decision(Outcome.SUCCESS)
    if word in FAILED_STATES:
        return Decision(
            Outcome.FAILED,
            f"Slurm job {job_id} ended {word} (state from {source}: Slurm accounting gave none). ",
        )
    return Decision(Outcome.WATCH)
