"""On a terminal, a sticky run's per-job lines as one updating progress line.

Snakemake prints a block per job (a timestamp, the rule, its output, jobid, reason, resources,
then another timestamp and "Finished jobid", then "N of M steps done"): about 16 lines per
job, 3,300 for the claim-verification example's 203 jobs. Short invocations are the point of
the sticky executor, so on a terminal :class:`CondensedOutput`, a filter on Snakemake's
stream handler only, drops those per-job records and redraws one line in their place::

    sticky: 120/203 jobs done (59%), 9.5 jobs/s, 2/2 workers busy, about 0:09 left

Everything else (warnings, errors, a failed job's block, the end lines) is printed as before,
on a line of its own. ``--verbose`` or ``--printshellcmds`` keep Snakemake's per-job lines; so
does a stream that is not a terminal (a log file, CI, a pipe: plain lines, as Snakemake writes
them). The run's log file (``.snakemake/log/``) keeps every line either way. The line itself
is pure (:func:`status_line`).
"""

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Optional

PER_JOB_EVENTS = frozenset({"job_info", "job_started", "job_finished", "group_info", "progress"})
"""Snakemake's per-job log events (``LogEvent`` values): a job's block, its end, the count."""
PER_ROUND_MESSAGES = frozenset({"Select jobs to execute..."})
"""What Snakemake's scheduler says at every scheduling round (about one per job)."""


def _clock(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    hours, rest = divmod(seconds, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def status_line(
    done: int, total: int, elapsed: float, busy: int, workers: int, started: Optional[int] = None
) -> str:
    """The progress line: jobs done of all, the rate since the first job finished, workers
    busy, and the time left at that rate. ``started``: jobs done when the rate's clock began
    (jobs restored or up to date before any ran are not counted in it)."""
    share = f" ({100 * done // total}%)" if total else ""
    line = f"sticky: {done}/{total} jobs done{share}"
    counted = done - (started or 0)
    if elapsed > 0 and counted > 0:
        rate = counted / elapsed
        line += f", {rate:.1f} jobs/s"
    else:
        rate = 0.0
    if workers:
        line += f", {busy}/{workers} workers busy"
    if rate > 0 and total > done:
        line += f", about {_clock((total - done) / rate)} left"
    return line


class CondensedOutput(logging.Filter):
    """A filter on Snakemake's stream handler (a terminal): per-job records become one line
    redrawn in place; any other record first clears it, so it starts at column 0."""

    def __init__(
        self,
        handler: logging.StreamHandler,  # type: ignore[type-arg]
        busy: Callable[[], tuple[int, int]],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        super().__init__("sticky-condensed")
        self.handler, self.busy, self.clock = handler, busy, clock
        self.done = self.total = 0
        self._first: Optional[tuple[float, int]] = None
        self._shown = False
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        event = getattr(record, "event", None)
        event = getattr(event, "value", event)
        if event not in PER_JOB_EVENTS:
            if event is None and record.getMessage() in PER_ROUND_MESSAGES:
                return False
            self._clear()
            return True
        if event == "progress":
            self.done = int(getattr(record, "done", self.done) or 0)
            self.total = int(getattr(record, "total", self.total) or 0)
            self.draw()
        return False

    def line(self) -> str:
        now = self.clock()
        if self._first is None:
            self._first = (now, self.done)
        busy, workers = self.busy()
        start, started = self._first
        return status_line(self.done, self.total, now - start, busy, workers, started)

    def draw(self) -> None:
        self._write("\r" + self.line() + "\x1b[K")
        self._shown = True

    def _clear(self) -> None:
        if self._shown:
            self._shown = False
            self._write("\r\x1b[K")

    def close_line(self) -> Optional[str]:
        """At the end of the run: clear the line and return its last state (printed by the
        executor as an ordinary line), or None if no job was counted."""
        self._clear()
        return self.line() if self.total else None

    def _write(self, text: str) -> None:
        stream: Any = self.handler.stream
        with self._lock:
            try:
                stream.write(text)
                stream.flush()
            except (OSError, ValueError):
                pass  # a closed terminal: the line is only a courtesy
