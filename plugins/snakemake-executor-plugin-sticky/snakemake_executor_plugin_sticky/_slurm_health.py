"""Faults of the cluster itself, as the pilot launcher sees them: the pure core.

Pilot states come from ``squeue`` (``slurmctld``), which does not need Slurm's accounting
database; ``sacct`` (``slurmdbd`` and its database) is never needed to run pilots. The watch
keeps the user told, each at most once per outage:

- accounting down (a periodic, bounded ``sacct`` probe fails): one warning that pilots keep
  running with their states from ``squeue``/``scontrol``, one note when it answers again;
- ``squeue`` not answering for longer than a deadline: one warning naming the command and its
  error (the manager keeps the last view meanwhile; connected pilots are still watched by their
  heartbeats, starting ones by the start timeout, so nothing waits forever).
"""

from dataclasses import dataclass
from typing import Optional


@dataclass
class SlurmWatch:
    squeue_deadline: float = 60.0
    """Seconds ``squeue`` may fail before the user is told."""
    accounting_every: float = 20.0
    """Seconds between two accounting probes."""

    def __post_init__(self) -> None:
        self._squeue_failing_since: Optional[float] = None
        self._squeue_warned = False
        self._next_probe: Optional[float] = None
        self._probing = False
        self.accounting_down = False

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
        if error is not None and not self.accounting_down:
            self.accounting_down = True
            return (
                f"sticky: Slurm accounting does not answer ({error}); pilots keep running and "
                "their states come from squeue/scontrol, which do not need it. sacct shows "
                "nothing of this run until slurmdbd and its database are back"
            )
        if error is None and self.accounting_down:
            self.accounting_down = False
            return "sticky: Slurm accounting answers again (sacct)"
        return None
