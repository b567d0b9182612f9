"""Machine-readable metrics of a sticky run, and the summary printed at its end.

One JSON object per line in ``.snakemake/sticky/<run-id>/metrics.jsonl``; every record has
``event`` and ``t`` (seconds since the run's manager started). Events: ``worker_started``
(``handle``; ``pid`` of a local worker, ``slurm_job`` of a pilot),
``worker_connected``, ``state_built`` (``seconds``: the template's build time on that worker;
``direct_because``: why its invocations run in direct mode although it asked for fork mode, or
null),
``state_failed``, ``state_building`` (a worker was sent an invocation whose template it must
build first), ``invocation`` (``queued_s``, ``exec_s``, ``latency_s`` from submission to
result, ``worker``), ``requeued``, ``worker_lost``, ``worker_ended`` (the job's own code ended
the worker's process: ``fate`` succeed/fail, ``reason``), ``worker_stop``, ``worker_stopped``,
``connection_refused``.
"""

import json
import statistics
import threading
import time
from array import array
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union


def _iter_file(path: Path, offset: int = 0) -> Iterator[dict[str, Any]]:
    """The complete records of a metrics file from ``offset``, one at a time (a line not yet
    ended, while the run still writes it, is left for the next read)."""
    with open(path, encoding="utf-8") as f:
        f.seek(offset)
        for line in f:
            if line.endswith("\n") and line.strip():
                yield json.loads(line)


def read_records(path: Path) -> list[dict[str, Any]]:
    """Every complete record of a metrics file, also while its run still writes it."""
    return list(_iter_file(path))


class MetricsLog:
    """Append-only JSONL event log, safe to write from any thread.

    Records are not kept in memory (a paper-scale run writes one per invocation, 150,000 and
    more): ``records()`` reads back what this log wrote to its file.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._start = time.monotonic()
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: Optional[Any] = open(path, "a", encoding="utf-8")
        self._offset = self._file.tell()  # where this log's records begin
        # records_since's cursor: how many records it has read, and the file offset after them.
        self._cursor = (0, self._offset)

    def write(self, event: str, **fields: Any) -> None:
        record = {"event": event, "t": round(time.monotonic() - self._start, 6), **fields}
        with self._lock:
            if self._file is not None:
                self._file.write(json.dumps(record) + "\n")
                self._file.flush()

    def elapsed(self) -> float:
        """Seconds since the log started: the clock of the records' ``t``."""
        return time.monotonic() - self._start

    def records_since(self, index: int) -> list[dict[str, Any]]:
        """The records written after the first ``index`` ones, in order. A caller that asks
        for what follows its last answer reads only the new lines, not the whole file."""
        with self._lock, open(self.path, encoding="utf-8") as f:
            count, pos = self._cursor if index >= self._cursor[0] else (0, self._offset)
            f.seek(pos)
            out: list[dict[str, Any]] = []
            for line in iter(f.readline, ""):
                count += 1
                if count > index:
                    out.append(json.loads(line))
            self._cursor = (count, f.tell())
        return out

    def iter_records(self) -> Iterator[dict[str, Any]]:
        """This log's records, one at a time from its file (after the run: a paper-scale
        run has one per invocation, too many to hold at once)."""
        yield from _iter_file(self.path, self._offset)

    def records(self, event: Optional[str] = None) -> list[dict[str, Any]]:
        with self._lock:
            records = list(_iter_file(self.path, self._offset))
        return [r for r in records if event is None or r["event"] == event]

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


@dataclass
class RunTotals:
    """What the end-of-run lines say, gathered in one pass over the records: a paper-scale
    run has one record per invocation (150,000 dicts would be over 100 MiB at the very end
    of the run, the main process's peak); this keeps counts, the builds and one float per
    invocation (its latency)."""

    invocations: int = 0
    failed: int = 0
    invocation_workers: set[str] = field(default_factory=set)
    latencies: array = field(default_factory=lambda: array("d"))
    per_build: Counter[tuple[str, str]] = field(default_factory=Counter)
    builds: list[dict[str, Any]] = field(default_factory=list)
    failed_builds: int = 0
    started_workers: set[str] = field(default_factory=set)
    lost: int = 0
    requeued: int = 0

    @classmethod
    def of(cls, records: Union["RunTotals", Iterable[dict[str, Any]]]) -> "RunTotals":
        if isinstance(records, RunTotals):
            return records
        totals = cls()
        for r in records:
            event = r.get("event")
            if event == "invocation":
                totals.invocations += 1
                totals.failed += not r.get("ok")
                if "worker" in r:
                    totals.invocation_workers.add(r["worker"])
                    totals.per_build[(r["worker"], r.get("template", ""))] += 1
                if "latency_s" in r:
                    totals.latencies.append(float(r["latency_s"]))
            elif event == "state_built":
                totals.builds.append(r)
            elif event == "state_failed":
                totals.failed_builds += 1
            elif event == "worker_started" and "worker" in r:
                totals.started_workers.add(r["worker"])
            elif event == "worker_lost":
                totals.lost += 1
            elif event == "requeued":
                totals.requeued += 1
        return totals


def summarize(records: Union[RunTotals, Iterable[dict[str, Any]]]) -> Optional[str]:
    """A few lines for the end of a run; None if no invocation ran."""
    totals = RunTotals.of(records)
    if not totals.invocations:
        return None
    latencies = sorted(totals.latencies)
    p95 = latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))]
    lines = [
        f"sticky: {totals.invocations} invocations ({totals.failed} failed) on "
        f"{len(totals.invocation_workers)} worker(s); "
        f"latency median {statistics.median(latencies) * 1000:.1f} ms, "
        f"p95 {p95 * 1000:.1f} ms",
    ]
    for b in totals.builds:
        count = totals.per_build[(b["worker"], b["template"])]
        lines.append(
            f"  worker {b['worker']}: built {b['template']!r} in {b['seconds']:.2f} s, "
            f"then ran {count} invocation(s) of it"
        )
    if totals.lost or totals.requeued:
        lines.append(f"  {totals.lost} worker(s) lost, {totals.requeued} invocation(s) requeued")
    return "\n".join(lines)
