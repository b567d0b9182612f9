"""A workflow cell whose Snakemake run fails fails its cell, with the workflow's error.

IPython runs ``!snakemake ...`` without raising when the command fails (it only sets
``_exit_code``), so under the stock kernel a failed workflow is silent and the next cell
crashes on a missing output. In the nbrewind kernels, while a workflow cell runs,
:class:`WorkflowWatch` wraps the shell's ``system`` (what ``!`` calls) and looks at the
Snakemake logs the cell wrote. The cell fails when

- a ``!`` command naming snakemake exits non-zero, or
- a Snakemake log written during the cell (``.snakemake/log/*.snakemake.log`` in the working
  directory, or in a directory the command enters with ``cd DIR`` or ``-d/--directory DIR``)
  reports an error, which also catches a failure hidden in a pipe (``... | grep``).

Its error is the workflow's own error block (from the captured output, else the log), so
papermill reports it as the cell's error. Not seen: a snakemake that fails before writing a
log (no Snakefile) inside a pipe whose last command succeeds; ``subprocess`` calls that fail
before writing a log (``check=True`` raises by itself).
"""

import re
import shlex
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional

_SNAKEMAKE = re.compile(r"\bsnakemake\b")
_ERROR_START = re.compile(
    r"^(?:[A-Z]\w*(?:Exception|Error)\b|Error in rule |Error: |Exiting because )", re.MULTILINE
)
_NOISE = ("Complete log", "Elapsed time", "Shutting down, this might take")
_MAX_LINES = 30


def workflow_error(text: str) -> Optional[str]:
    """The error block of a Snakemake run's output or log, or None when it reports none."""
    m = _ERROR_START.search(text)
    if m is None:
        return None
    lines = [
        line.rstrip()
        for line in text[m.start() :].splitlines()
        if line.strip() and not line.startswith(_NOISE)
    ]
    if len(lines) > _MAX_LINES:
        lines = lines[:_MAX_LINES] + ["..."]
    return "\n".join(lines)


def log_dirs(cmd: str, cwd: Path) -> list[Path]:
    """Where the Snakemake runs of a command write their logs."""
    dirs = [cwd]
    try:
        words = shlex.split(cmd, comments=False)
    except ValueError:
        words = cmd.split()
    for i, word in enumerate(words[:-1]):
        if word in ("cd", "-d", "--directory"):
            dirs.append(cwd / words[i + 1])
        elif word.startswith("--directory="):
            dirs.append(cwd / word.partition("=")[2])
    return [d / ".snakemake" / "log" for d in dict.fromkeys(dirs)]


def _logs(dirs: list[Path]) -> dict[Path, float]:
    found = {}
    for d in dirs:
        try:
            for path in d.glob("*.snakemake.log"):
                found[path] = path.stat().st_mtime
        except OSError:
            continue
    return found


class _Tee:
    """``sys.stdout`` that also keeps what is written (IPython's ``!`` prints through it)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self.text: list[str] = []

    def write(self, data: str) -> int:
        self.text.append(data)
        return self._stream.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class WorkflowWatch:
    """Watch one workflow cell (``with WorkflowWatch(shell, cwd) as watch: ...``), then
    ``watch.failure()`` is the workflow's error, or None."""

    def __init__(self, shell: Any, cwd: Path) -> None:
        self.shell = shell
        self.cwd = cwd
        self.failures: list[str] = []
        self.dirs: list[Path] = [cwd / ".snakemake" / "log"]
        self._original: Optional[Callable[[str], Any]] = None
        self._before: dict[Path, float] = {}

    def __enter__(self) -> "WorkflowWatch":
        self._before = _logs(self.dirs)
        self._original = self.shell.system
        self.shell.system = self._system
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._original is not None:
            self.shell.system = self._original

    def _system(self, cmd: str) -> Any:
        assert self._original is not None
        if not _SNAKEMAKE.search(cmd):
            return self._original(cmd)
        for d in log_dirs(cmd, self.cwd):
            if d not in self.dirs:
                self.dirs.append(d)
                self._before.update(_logs([d]))
        tee = _Tee(sys.stdout)
        sys.stdout = tee
        try:
            result = self._original(cmd)
        finally:
            sys.stdout = tee._stream
        status = self.shell.user_ns.get("_exit_code", 0)
        if status:
            printed = "".join(tee.text)
            error = workflow_error(printed) or self._log_error()
            if error is None:
                tail = "\n".join(printed.strip().splitlines()[-_MAX_LINES:])
                error = tail or "(it printed nothing)"
            self.failures.append(f"`{cmd.strip()}` exited with status {status}:\n{error}")
        return result

    def _log_error(self) -> Optional[str]:
        for path, _ in sorted(_logs(self.dirs).items(), key=lambda item: item[1]):
            if path in self._before:
                continue  # a log of an earlier run
            try:
                error = workflow_error(path.read_text(errors="replace"))
            except OSError:
                continue
            if error is not None:
                return f"{error}\n(from {path})"
        return None

    def failure(self) -> Optional[str]:
        """The workflow's error, if any Snakemake run of the cell failed."""
        if self.failures:
            return "\n".join(self.failures)
        error = self._log_error()
        return f"a Snakemake run of this cell failed:\n{error}" if error else None
