"""Snakemake logger plugin ``distea``: structured job events for post-hoc impact analysis.

``snakemake --logger distea [--logger-distea-dir DIR]`` writes one JSON line per job start,
end and failure (rule, wildcards, inputs and outputs with content hashes, times, host) to
``DIR/snakemake-<host>-<pid>.jsonl`` (default DIR: ``$DISTEA_TRACE``, else
``.snakemake/distea``), in the DISTEA log format (:mod:`distea._schema`). The normal console
output is unchanged: this handler writes neither to a stream nor to Snakemake's log file.

Why hashes: a file edge (job A wrote it, job B read it) is only evidence of causality when B
read what A wrote; the analysis compares them. Hashing costs one read of each input and
output; files over ``--logger-distea-hash-limit-mb`` are summarised by size and mtime instead.

This module must import cleanly whatever happens: Snakemake imports every installed
``snakemake_logger_plugin_*`` module on every command. Settings therefore use
``typing.Optional`` (never ``X | None``) and nothing here runs at import time.
"""

import hashlib
import json
import os
import re
import socket
import sys
import threading
from dataclasses import dataclass, field
from logging import LogRecord
from pathlib import Path
from typing import Any, Optional

from snakemake_interface_logger_plugins.base import LogHandlerBase
from snakemake_interface_logger_plugins.settings import LogHandlerSettingsBase

_SCHEMA_VERSION = 1
_ANNOTATION = re.compile(r" \([^()]*\)$")
_CHUNK = 1 << 20


@dataclass
class LogHandlerSettings(LogHandlerSettingsBase):
    dir: Optional[str] = field(
        default=None,
        metadata={
            "help": "Folder for the job event log (default: $DISTEA_TRACE, else "
            ".snakemake/distea). Give the tracer (DISTEA_TRACE) the same folder.",
            "env_var": False,
            "required": False,
        },
    )
    hash_limit_mb: Optional[int] = field(
        default=None,
        metadata={
            "help": "Files larger than this many MiB are identified by size and mtime instead "
            "of a content hash (default 1024).",
            "env_var": False,
            "required": False,
        },
    )


class LogHandler(LogHandlerBase):
    """Writes JOB_INFO / JOB_FINISHED / JOB_ERROR events as DISTEA ``job``/``done``/``fail``."""

    def __post_init__(self) -> None:
        settings = self.settings if isinstance(self.settings, LogHandlerSettings) else None
        folder = (settings and settings.dir) or os.environ.get("DISTEA_TRACE")
        self.folder = Path(folder or ".snakemake/distea")
        limit = settings.hash_limit_mb if settings and settings.hash_limit_mb else 1024
        self.hash_limit = int(limit) * (1 << 20)
        self.host = socket.gethostname()
        self.path = self.folder / f"snakemake-{self.host}-{os.getpid()}.jsonl"
        self._outputs: dict[str, list[str]] = {}
        self._out: Optional[Any] = None
        self._write_lock = threading.Lock()
        if os.environ.get("DISTEA_TRACE") and self.common_settings is not None:
            # Snakemake's own process runs workflow code too (the Snakefile, input functions,
            # params callables, their helpers): trace it from here, before the Snakefile is
            # read (only when Snakemake made this handler). Tracing must never stop a run.
            try:
                from distea._snakemake import trace_snakemake_process

                trace_snakemake_process()
            except Exception as e:  # pragma: no cover - defensive
                print(f"distea: not tracing Snakemake's process ({e})", file=sys.stderr)

    def _open(self) -> Any:
        if self._out is None:
            self.folder.mkdir(parents=True, exist_ok=True)
            self._out = open(self.path, "a", encoding="utf-8")
            self._line(
                {
                    "distea": _SCHEMA_VERSION,
                    "k": "header",
                    "source": "logger",
                    "process": f"snakemake:{self.host}:{os.getpid()}",
                    "role": "snakemake",
                    "host": self.host,
                    "cwd": os.getcwd(),
                }
            )
        return self._out

    def _line(self, record: dict[str, Any]) -> None:
        out = self._out
        if out is not None:
            out.write(json.dumps(record, separators=(",", ":"), default=str) + "\n")
            out.flush()

    def emit(self, record: LogRecord) -> None:
        event = str(getattr(record, "event", "") or "")
        try:
            if event == "job_info":
                self._job_info(record)
            elif event == "job_finished":
                self._job_end(record, "done")
            elif event == "job_error":
                self._job_end(record, "fail")
        except Exception:  # a logger must never break the run it observes
            self.handleError(record)

    def _job_info(self, record: LogRecord) -> None:
        jobid = str(getattr(record, "jobid", ""))
        outputs = [_path(f) for f in getattr(record, "output", None) or []]
        self._outputs[jobid] = outputs
        with self._write_lock:
            self._open()
            self._line(
                {
                    "k": "job",
                    "id": jobid,
                    "rule": getattr(record, "rule_name", None),
                    "wildcards": dict(getattr(record, "wildcards", None) or {}),
                    "input": [self._hashed(_path(f)) for f in getattr(record, "input", None) or []],
                    "output": [[p, None] for p in outputs],
                    "log": [_path(f) for f in getattr(record, "log", None) or []],
                    "host": self.host,
                    "t": record.created,
                }
            )

    def _job_end(self, record: LogRecord, kind: str) -> None:
        jobid = str(getattr(record, "job_id", getattr(record, "jobid", "")))
        outputs = self._outputs.get(jobid, [])
        line: dict[str, Any] = {"k": kind, "id": jobid, "t": record.created}
        if kind == "done":
            line["output"] = [self._hashed(p) for p in outputs]
        with self._write_lock:
            self._open()
            self._line(line)

    def _hashed(self, path: str) -> list[Optional[str]]:
        """[path, content digest or None when it does not exist]."""
        try:
            stat = os.stat(path)
        except OSError:
            return [path, None]
        if os.path.isdir(path):  # a directory() output: every file inside, by content
            digest = hashlib.blake2b(digest_size=16)
            budget = self.hash_limit
            for folder, dirs, files in os.walk(path):
                dirs.sort()
                for name in sorted(files):
                    if name == ".snakemake_timestamp":  # Snakemake's marker, not content
                        continue
                    full = os.path.join(folder, name)
                    digest.update(os.path.relpath(full, path).encode() + b"\0")
                    budget = self._update(digest, full, budget)
            return [path, "dir:" + digest.hexdigest()]
        if stat.st_size > self.hash_limit:
            return [path, f"stat:{stat.st_size}:{stat.st_mtime_ns}"]
        digest = hashlib.blake2b(digest_size=16)
        self._update(digest, path, self.hash_limit)
        return [path, digest.hexdigest()]

    @staticmethod
    def _update(digest: Any, path: str, budget: int) -> int:
        """Add a file's bytes (its size and mtime once ``budget`` bytes are spent); the rest."""
        try:
            stat = os.stat(path)
            if stat.st_size > budget:
                digest.update(f"stat:{stat.st_size}:{stat.st_mtime_ns}".encode())
                return budget
            with open(path, "rb") as f:
                while chunk := f.read(_CHUNK):
                    digest.update(chunk)
            return budget - stat.st_size
        except OSError:
            digest.update(b"<unreadable>")
            return budget

    def close(self) -> None:
        with self._write_lock:
            if self._out is not None:
                self._out.close()
                self._out = None
        super().close()

    @property
    def writes_to_stream(self) -> bool:
        return False

    @property
    def writes_to_file(self) -> bool:
        return False

    @property
    def has_filter(self) -> bool:
        return True

    @property
    def has_formatter(self) -> bool:
        return True

    @property
    def needs_rulegraph(self) -> bool:
        return False


def _path(value: Any) -> str:
    """A file name as Snakemake logs it, without annotations such as `` (temp)``."""
    return _ANNOTATION.sub("", str(value))
