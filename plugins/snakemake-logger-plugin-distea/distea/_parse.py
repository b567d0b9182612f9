"""Read a log directory into a :class:`~distea._model.Trace`, with errors that name file and line.

Damage that stays local (a truncated last line from a killed process, one garbled record) is
skipped with a warning naming the file and line, and the rest is used. Damage that makes a
whole file meaningless (not a DISTEA log, written by a newer version) raises
:class:`LogFormatError` naming the file and line and what to do.
"""

import itertools
import json
import re
from pathlib import Path
from typing import Any, Optional

from ._model import Comm, Job, Process, StateNote, Trace, gc_paused
from ._schema import REQUIRED_FIELDS, SCHEMA_VERSION, job_key

MAX_BAD_FRACTION = 0.2
"""Above this fraction of unreadable lines (and more than 20 of them) a file is refused."""


class LogFormatError(Exception):
    """A log file that cannot be used; the message names the file, the line and the fix."""

    def __init__(self, path: Path, line: int, problem: str) -> None:
        super().__init__(f"{path}:{line}: {problem}" if line else f"{path}: {problem}")
        self.path = path
        self.line = line
        self.problem = problem


@gc_paused()
def read_logs(directory: "str | Path") -> Trace:
    """Read every ``*.jsonl`` DISTEA log under ``directory`` (and plain Snakemake logs)."""
    root = Path(directory)
    if not root.is_dir():
        raise LogFormatError(root, 0, "no such log directory; pass the folder given to the tracer")
    trace = Trace()
    files = sorted(root.rglob("*.jsonl"))
    for path in files:
        _read_jsonl(path, trace)
    if not trace.jobs:
        for path in sorted(root.rglob("*.snakemake.log")):
            _read_snakemake_log(path, trace)
    if not files and not trace.jobs:
        raise LogFormatError(
            root,
            0,
            "no DISTEA logs (*.jsonl) or Snakemake logs (*.snakemake.log) here; run Snakemake "
            "with --logger distea --logger-distea-dir DIR and DISTEA_TRACE=DIR",
        )
    return trace


def _read_jsonl(path: Path, trace: Trace) -> None:
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise LogFormatError(path, 0, f"cannot read: {e.strerror}") from None
    text = raw.decode("utf-8", errors="replace")
    lines = text.split("\n")
    truncated = bool(lines) and lines[-1] != ""
    if not truncated:
        lines.pop()
    if not lines:
        trace.warnings.append(f"{path}: empty log file, skipped")
        return
    try:
        head = json.loads(lines[0])
    except ValueError:
        raise LogFormatError(
            path, 1, "not a DISTEA log (the first line is not a JSON header); remove it"
        ) from None
    if not isinstance(head, dict) or head.get("k") != "header" or "distea" not in head:
        raise LogFormatError(path, 1, "not a DISTEA log (no header record); remove it")
    version = head.get("distea")
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise LogFormatError(
            path,
            1,
            f"written by log format version {version!r}, but this DISTEA reads up to "
            f"{SCHEMA_VERSION}; upgrade snakemake-sticky-hpc to analyse it",
        )
    missing = [f for f in REQUIRED_FIELDS["header"] if f not in head]
    if missing:
        raise LogFormatError(path, 1, f"header lacks {', '.join(missing)}; remove the file")
    source = head["source"]
    if source == "logger":
        if isinstance(head.get("cwd"), str) and trace.workdir is None:
            trace.workdir = head["cwd"]
        _read_logger(path, lines, truncated, trace)
    else:
        _read_process(path, head, lines, truncated, trace)


def _records(path: Path, lines: list[str], truncated: bool, trace: Trace) -> Any:
    """(line number, kind, record) of every readable record after the header.

    Fast path: a well-formed file is decoded by one ``json.loads`` call (the per-call cost of
    a million small ``loads`` dominates otherwise); on any damage, line by line, so that the
    warnings name the lines.
    """
    required = REQUIRED_FIELDS
    body = lines[1:]
    try:
        decoded = json.loads("[" + ",".join(body) + "]") if body else []
    except ValueError:
        decoded = None
    if decoded is not None:
        kinds: list[Any] = []
        append = kinds.append
        try:
            for record in decoded:
                kind = record["k"]
                for name in required[kind]:
                    record[name]
                append(kind)
            ok = True
        except (KeyError, TypeError):
            ok = False
        if ok:  # zipped in C: no generator frame per record
            return zip(itertools.count(2), kinds, decoded)
    return _records_slowly(path, lines, truncated, trace)


def _records_slowly(path: Path, lines: list[str], truncated: bool, trace: Trace) -> Any:
    bad = 0
    last = len(lines)
    loads = json.loads
    required = REQUIRED_FIELDS
    for number, line in enumerate(lines[1:], start=2):
        try:
            record = loads(line)
            kind = record["k"]
            for name in required[kind]:
                record[name]
        except (ValueError, KeyError, TypeError):
            if number == last and truncated:
                trace.warnings.append(
                    f"{path}:{number}: truncated last record (the process was killed while "
                    "writing); ignored"
                )
                continue
            bad += 1
            if bad <= 5:
                trace.warnings.append(f"{path}:{number}: unreadable record skipped: {line[:80]!r}")
            continue
        yield number, kind, record
    if bad > 20 and bad > MAX_BAD_FRACTION * (len(lines) - 1):
        raise LogFormatError(
            path,
            0,
            f"{bad} of {len(lines) - 1} records are unreadable; the file is corrupt, remove it "
            "or re-run with tracing",
        )
    if bad > 5:
        trace.warnings.append(f"{path}: {bad - 5} more unreadable records skipped")


def _read_process(
    path: Path, head: dict[str, Any], lines: list[str], truncated: bool, trace: Trace
) -> None:
    name = str(head["process"])
    if name in trace.processes:
        trace.warnings.append(f"{path}:1: process {name!r} already read from another file; merged")
        proc = trace.processes[name]
    else:
        proc = Process(name, str(head.get("role", head["source"])), str(path), head.get("job"))
        proc.host = str(head.get("host", ""))
        proc.pid = str(head.get("pid", ""))
        proc.worker_id = head.get("worker_id")
        proc.parent = head.get("parent") or None
        clock = head.get("parent_clock")
        proc.parent_clock = int(clock) if isinstance(clock, int) else None
        proc.forked = bool(head.get("forked"))
        trace.processes[name] = proc
    fid, known = trace.function_id, trace.function_ids
    ids, first, last = proc.fn_ids.append, proc.fn_first.append, proc.fn_last.append
    count = 0
    for number, kind, r in _records(path, lines, truncated, trace):
        count += 1
        try:
            if kind == "fn":  # the bulk of every log: kept lean
                a, b = r["c"]
                f = r["f"]
                i = known.get(f)
                ids(fid(f) if i is None else i)
                first(int(a))
                last(int(b))
            elif kind == "send":
                proc.sends.append(Comm(str(r["m"]), int(r["c"]), r.get("to"), r.get("job")))
            elif kind == "recv":
                proc.recvs.append(Comm(str(r["m"]), int(r["c"]), r.get("from"), r.get("job")))
            elif kind == "open":
                proc.opens.setdefault(str(r["p"]), int(r["c"]))
                proc.reads.append((str(r["p"]), int(r["c"])))
            elif kind == "param":
                proc.params.append((str(r["n"]), int(r["c"]), r.get("job")))
            elif kind == "tmpl":
                proc.templates.append((str(r["n"]), int(r["c"])))
            elif kind == "digest":
                proc.digests.append((str(r["f"]), str(r.get("job") or ""), int(r["n"]), r["h"]))
            elif kind == "cfg":
                proc.config.append((str(r["n"]), int(r["c"]), r.get("job")))
            elif kind == "cfgfile":
                keys = r.get("keys") or {}
                trace.config_files[str(r["p"])] = {str(k): str(v) for k, v in keys.items()}
            elif kind == "write":
                proc.writes.append((str(r["p"]), int(r["c"])))
            elif kind == "spawn":
                argv = tuple(str(a) for a in (r.get("argv") or ()))
                if r.get("python"):  # a script started by its path, whose #! runs Python
                    argv = (*argv, "(#! python)")
                proc.spawns.append((int(r["c"]), r.get("job"), argv))
            elif kind == "end":
                proc.end = int(r["c"])
                proc.mode = r.get("mode") or proc.mode
                proc.complete = r.get("complete", proc.complete)
            elif kind == "state":
                written = r.get("w")
                proc.states.append(
                    StateNote(
                        str(r.get("job") or ""),
                        int(r["c"]),
                        None if written is None else bool(written),
                        str(r.get("e") or ""),
                    )
                )
            elif kind == "ctx":
                a, b = r["c"]
                to_end = r.get("to") == "end"
                proc.contexts.append((str(r["job"]), int(a), int(b), int(r["f"]), to_end))
                if r.get("w") == "input":
                    proc.input_contexts.append((str(r["job"]), int(b)))
            else:
                count -= 1
                trace.warnings.append(f"{path}:{number}: record kind {kind!r} ignored here")
        except (ValueError, TypeError):
            trace.warnings.append(f"{path}:{number}: record with a malformed value skipped")
    trace.events += count
    if proc.end is None and proc.role != "sticky-manager":
        trace.warnings.append(
            f"{path}: process {name!r} ended without writing its function records (killed?); "
            "its messages are used, its functions are unknown"
        )
    proc.sends.sort(key=lambda c: c.clock)
    proc.recvs.sort(key=lambda c: c.clock)


def _files(value: Any) -> list[tuple[str, Optional[str]]]:
    out: list[tuple[str, Optional[str]]] = []
    for item in value or []:
        if isinstance(item, (list, tuple)) and item:
            out.append((str(item[0]), item[1] if len(item) > 1 else None))
        else:
            out.append((str(item), None))
    return out


def _read_logger(path: Path, lines: list[str], truncated: bool, trace: Trace) -> None:
    by_id: dict[str, Job] = {}
    job: Optional[Job]
    for number, kind, r in _records(path, lines, truncated, trace):
        trace.events += 1
        if kind == "job":
            outputs = _files(r.get("output"))
            wildcards = {str(k): str(v) for k, v in (r.get("wildcards") or {}).items()}
            key = job_key(r["rule"], wildcards, [p for p, _ in outputs])
            job = Job(
                str(r["id"]),
                str(r["rule"]),
                key,
                wildcards,
                _files(r.get("input")),
                outputs,
                float(r.get("t", 0.0)),
            )
            by_id[job.id] = job
            trace.jobs[key] = job
        elif kind in ("done", "fail"):
            job = by_id.get(str(r["id"]))
            if job is None:
                trace.warnings.append(f"{path}:{number}: end of unknown job {r['id']!r} ignored")
                continue
            job.end = float(r.get("t", 0.0))
            job.ok = kind == "done"
            if kind == "done" and r.get("output"):
                job.outputs = _files(r["output"])
    for job in by_id.values():
        if job.ok is None:
            trace.warnings.append(
                f"{path}: job {job.key} never finished in this log (run interrupted?); its "
                "outputs are treated as possibly written"
            )


_RULE = re.compile(r"^\s*(?:local)?(?:rule|checkpoint) (\S+):\s*$")
_FIELD = re.compile(r"^\s+(input|output|jobid|wildcards): (.*)$")
_FINISHED = re.compile(r"Finished job(?:id:)? (\d+)")


def _read_snakemake_log(path: Path, trace: Trace) -> None:
    """Jobs and their files from a plain ``.snakemake/log`` file (no hashes, no clocks)."""
    text = path.read_text(errors="replace")
    current: Optional[dict[str, Any]] = None
    jobs: dict[str, Job] = {}

    def close() -> None:
        if current and "jobid" in current:
            outputs: list[tuple[str, Optional[str]]]
            outputs = [(p, None) for p in current.get("output", [])]
            wildcards = current.get("wildcards", {})
            key = job_key(current["rule"], wildcards, [p for p, _ in outputs])
            job = Job(current["jobid"], current["rule"], key, wildcards)
            job.inputs = [(p, None) for p in current.get("input", [])]
            job.outputs = outputs
            jobs[job.id] = job
            trace.jobs[key] = job

    for line in text.splitlines():
        m = _RULE.match(line)
        if m:
            close()
            current = {"rule": m.group(1)}
            continue
        if current is not None:
            f = _FIELD.match(line)
            if f:
                name, value = f.groups()
                if name in ("input", "output"):
                    current[name] = [v.strip() for v in value.split(",") if v.strip()]
                elif name == "jobid":
                    current["jobid"] = value.strip()
                else:
                    current["wildcards"] = dict(
                        item.strip().split("=", 1) for item in value.split(",") if "=" in item
                    )
                continue
            if line.strip() and not line.startswith((" ", "\t")):
                close()
                current = None
        done = _FINISHED.search(line)
        if done and done.group(1) in jobs:
            jobs[done.group(1)].ok = True
    close()
    trace.events += len(jobs)
    if jobs:
        trace.warnings.append(
            f"{path}: plain Snakemake log: jobs and files only (no hashes, functions or "
            "messages); use --logger distea for function- and message-level impacts"
        )
