"""What a user sees of a sticky run: progress while workers start and build templates, and a
one-line summary at the start and at the end of the run.

Building a template (loading a model, say) can take a minute, during which Snakemake prints
nothing: :class:`ProgressReporter` prints, every few seconds, which worker is starting or
building which template and for how long. It reads the run's metrics events
(:mod:`._metrics`) and nothing else, so it needs no hook in the manager. The folding of events
(:class:`ProgressState`), the decision when to speak (:func:`report_due`) and the lines
themselves (:func:`progress_line`, :func:`start_line`, :func:`end_line`) are pure.
"""

import threading
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Optional, Union

from ._metrics import MetricsLog, RunTotals

STARTING = "starting"
BUILDING = "building"

REPORT_DELAY = 3.0
"""Seconds a worker may start or build silently before the first progress line."""

REPORT_INTERVAL = 10.0
"""Seconds between progress lines while something is still starting or building."""


@dataclass(frozen=True)
class Pending:
    """A worker that is not ready yet: starting (not connected) or building a template."""

    worker: str
    template: str
    phase: str
    since: float
    where: str = ""


class ProgressState:
    """Folds metrics events into the workers that are starting or building right now."""

    def __init__(self) -> None:
        self._pending: dict[str, Pending] = {}

    def feed(self, record: dict[str, Any]) -> None:
        event, worker = record.get("event"), record.get("worker")
        if not isinstance(worker, str):
            return
        t = float(record.get("t", 0.0))
        if event == "worker_started":
            where = str(record.get("handle") or "")
            self._pending[worker] = Pending(worker, str(record["template"]), STARTING, t, where)
        elif event == "worker_connected":
            # Connected and idle until it is sent an invocation (state_building if it must
            # build a template for it first).
            self._pending.pop(worker, None)
        elif event == "state_building":
            self._pending[worker] = Pending(worker, str(record["template"]), BUILDING, t)
        elif event in ("state_built", "state_failed", "worker_lost", "worker_ended"):
            self._pending.pop(worker, None)
        elif event in ("worker_stop", "worker_stopped", "invocation"):
            self._pending.pop(worker, None)

    def pending(self) -> list[Pending]:
        """Starting and building workers, the longest waiting first."""
        return sorted(self._pending.values(), key=lambda p: (p.since, p.worker))


def report_due(
    pending: list[Pending],
    now: float,
    last_report: Optional[float],
    delay: float = REPORT_DELAY,
    interval: float = REPORT_INTERVAL,
) -> bool:
    """Whether to print a progress line now: once something has waited ``delay`` seconds,
    then every ``interval`` seconds while anything still waits."""
    if not pending or now - pending[0].since < delay:
        return False
    return last_report is None or now - last_report >= interval


def progress_line(pending: list[Pending], now: float) -> str:
    """``sticky: worker w1 building template 'model' (12 s); ...``: which worker, which
    template, how long."""
    parts = []
    for p in pending:
        elapsed = f"{max(0.0, now - p.since):.0f} s"
        if p.phase == BUILDING:
            parts.append(f"worker {p.worker} building template {p.template!r} ({elapsed})")
        else:
            where = f", {p.where}" if p.where else ""
            parts.append(
                f"worker {p.worker} starting for template {p.template!r} ({elapsed}{where})"
            )
    return "sticky: " + "; ".join(parts)


def start_line(
    templates: Iterable[Optional[str]],
    *,
    per_job: int = 0,
    max_workers: int,
    backend: str,
    restored: Optional[int] = None,
) -> str:
    """The run as the sticky executor sees it before the first job: how many jobs will run as
    invocations of which templates, how many through the local executor.

    ``templates``: each job to run's template (None: it does not opt in); ``per_job``: jobs
    whose rule computes its template per job (counted apart, decided when they run)."""
    counts: Counter[str] = Counter()
    local = 0
    for template in templates:
        if template is None:
            local += 1
        else:
            counts[template] += 1
    sticky = sum(counts.values())
    items = []
    if sticky:
        shown = ", ".join(f"{name!r} {n}" for name, n in sorted(counts.items()))
        items.append(
            f"{sticky} as invocations of {len(counts)} template(s) ({shown}) on up to "
            f"{max_workers} {backend} worker(s)"
        )
    if per_job:
        items.append(f"{per_job} whose rule picks its template per job")
    items.append(f"{local} through the local executor")
    line = f"sticky: {sticky + per_job + local} job(s) to run: " + ", ".join(items)
    if restored is not None:
        line += f"; {restored} restored from checkpoints"
    return line


def end_line(
    records: Union[RunTotals, Iterable[dict[str, Any]]],
    *,
    restored: Optional[int] = None,
    stored: Optional[int] = None,
) -> str:
    """The run in one line: invocations (failed), workers, template builds and their time,
    invocations that found their template warm, checkpoint restores and stores."""
    totals = RunTotals.of(records)
    builds, failed_builds = totals.builds, totals.failed_builds
    warm = max(0, totals.invocations - len(builds) - failed_builds)
    line = (
        f"sticky: run summary: {totals.invocations} invocation(s) ({totals.failed} failed) on "
        f"{len(totals.started_workers)} worker(s), {warm} on a warm template"
    )
    if builds:
        seconds = [float(b.get("seconds", 0.0)) for b in builds]
        longest = max(builds, key=lambda b: float(b.get("seconds", 0.0)))
        line += (
            f"; {len(builds)} template build(s), {sum(seconds):.1f} s in all (longest: "
            f"{longest['template']!r} on {longest['worker']}, {max(seconds):.1f} s)"
        )
    if failed_builds:
        line += f"; {failed_builds} template build(s) failed"
    if restored is not None:
        line += f"; checkpoints: {restored} restored, {stored or 0} stored"
    return line


class ProgressReporter:
    """A daemon thread that prints :func:`progress_line` while workers start or build."""

    def __init__(
        self,
        metrics: MetricsLog,
        emit: Callable[[str], None],
        *,
        poll: float = 0.5,
        delay: float = REPORT_DELAY,
        interval: float = REPORT_INTERVAL,
    ) -> None:
        self.metrics, self.emit = metrics, emit
        self.poll, self.delay, self.interval = poll, delay, interval
        self.state = ProgressState()
        self._seen = 0
        self._last: Optional[float] = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sticky-progress", daemon=True)

    def start(self) -> "ProgressReporter":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=2.0)

    def step(self) -> Optional[str]:
        """Read new events; return (and emit) a progress line if one is due."""
        records = self.metrics.records_since(self._seen)
        self._seen += len(records)
        for record in records:
            self.state.feed(record)
        now = self.metrics.elapsed()
        pending = self.state.pending()
        if not report_due(pending, now, self._last, self.delay, self.interval):
            if not pending:
                self._last = None  # the next wait starts its own delay
            return None
        self._last = now
        line = progress_line(pending, now)
        self.emit(line)
        return line

    def _run(self) -> None:
        while not self._stop.wait(self.poll):
            try:
                self.step()
            except Exception:  # progress must never disturb the run
                pass


def results_line(made: list[str], missing: list[str], shown: int = 3) -> Optional[str]:
    """The run's final outputs in one line, last: what was made, and what was not."""
    if not made and not missing:
        return None

    def some(files: list[str]) -> str:
        more = f" (and {len(files) - shown} more)" if len(files) > shown else ""
        return ", ".join(files[:shown]) + more

    if not missing:
        return f"sticky: results: {some(made)}"
    line = f"sticky: not made: {some(missing)}"
    return line + (f"; made: {some(made)}" if made else "")
