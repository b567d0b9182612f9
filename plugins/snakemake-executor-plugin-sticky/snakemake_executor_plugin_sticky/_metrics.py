"""Machine-readable metrics of a sticky run, and the summary printed at its end.

One JSON object per line in ``.snakemake/sticky/<run-id>/metrics.jsonl``; every record has
``event`` and ``t`` (seconds since the run's manager started). Events: ``worker_started``
(``handle``; ``pid`` of a local worker, ``slurm_job`` of a pilot),
``worker_connected``, ``state_built`` (``seconds``: the template's build time on that worker),
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
from pathlib import Path
from typing import Any, Optional


def read_records(path: Path) -> list[dict[str, Any]]:
    """Every complete record of a metrics file, also while its run still writes it (a line
    not yet ended is left for the next read)."""
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.endswith("\n")]


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

    def records(self, event: Optional[str] = None) -> list[dict[str, Any]]:
        with self._lock, open(self.path, encoding="utf-8") as f:
            f.seek(self._offset)
            records = [json.loads(line) for line in f if line.strip()]
        return [r for r in records if event is None or r["event"] == event]

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


def summarize(records: list[dict[str, Any]]) -> Optional[str]:
    """A few lines for the end of a run; None if no invocation ran."""
    invocations = [r for r in records if r["event"] == "invocation"]
    if not invocations:
        return None
    builds = [r for r in records if r["event"] == "state_built"]
    workers = {r["worker"] for r in invocations}
    latencies = sorted(r["latency_s"] for r in invocations)
    failed = sum(1 for r in invocations if not r["ok"])
    lost = sum(1 for r in records if r["event"] == "worker_lost")
    requeued = sum(1 for r in records if r["event"] == "requeued")
    p95 = latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))]
    lines = [
        f"sticky: {len(invocations)} invocations ({failed} failed) on {len(workers)} worker(s); "
        f"latency median {statistics.median(latencies) * 1000:.1f} ms, "
        f"p95 {p95 * 1000:.1f} ms",
    ]
    for b in builds:
        count = sum(
            1 for r in invocations if r["worker"] == b["worker"] and r["template"] == b["template"]
        )
        lines.append(
            f"  worker {b['worker']}: built {b['template']!r} in {b['seconds']:.2f} s, "
            f"then ran {count} invocation(s) of it"
        )
    if lost or requeued:
        lines.append(f"  {lost} worker(s) lost, {requeued} invocation(s) requeued")
    return "\n".join(lines)
