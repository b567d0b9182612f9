"""Hand-built DISTEA logs: processes with clocks, messages and logger job records."""

import json
from pathlib import Path
from typing import Any

import pytest


class LogDir:
    """Writes DISTEA log files into one directory, one call per process or logger."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def process(self, name: str, records: list[dict[str, Any]], **head: Any) -> Path:
        head.setdefault("role", "script")
        header = {"distea": 1, "k": "header", "source": "tracer", "process": name, **head}
        return self._write(f"{name.replace(':', '_')}.jsonl", [header, *records])

    def logger(self, jobs: list[dict[str, Any]], **head: Any) -> Path:
        """The logger plugin's log; ``cwd=`` names the workflow directory, as the plugin does."""
        header = {"distea": 1, "k": "header", "source": "logger", "process": "snakemake", **head}
        records: list[dict[str, Any]] = []
        for i, job in enumerate(jobs):
            records.append({"k": "job", "id": str(i), "t": float(i), **job})
        for i, job in enumerate(jobs):
            records.append(
                {"k": "done", "id": str(i), "t": 100.0 + i, "output": job.get("output", [])}
            )
        return self._write("snakemake.jsonl", [header, *records])

    @staticmethod
    def fn(name: str, first: int, last: int) -> dict[str, Any]:
        """A function's first entry and last return within one epoch."""
        return {"k": "fn", "f": name, "c": [first, last]}

    def _write(self, name: str, records: list[dict[str, Any]]) -> Path:
        path = self.root / name
        path.write_text("".join(json.dumps(r) + "\n" for r in records))
        return path


@pytest.fixture
def logs(tmp_path: Path) -> LogDir:
    return LogDir(tmp_path)
