"""Undeclared writes of jobs that run outside sticky workers (issue 26, part 3).

A sticky invocation's writes are seen by the audit hook in its worker (:mod:`._audit`). A
``shell:``, ``run:`` or plain ``script:`` job runs in processes this project does not
instrument (a shell, its children, Snakemake's own threads), but the executor sees when it
starts and when it ends. :class:`TreeWatch` compares the working directory's files and
folders (path, kind, size, mtime, inode, mode: an ``lstat`` each; a folder by kind, mode and
inode) at both moments: one created, changed or removed in between that no job of the
workflow declares (as an output, log or benchmark, inside a ``directory()`` output, or a
folder holding one of those) may have been written by the job. Such a job is not
stored: a restore would bring back its outputs without that file, unlike a rerun.

Jobs that run side by side share the window: a change seen while several ran counts for each
of them (none is stored), since nothing tells which one made it. That errs toward running
again, never toward a stale restore. Not seen: writes outside the working directory, and a
file a job writes and puts back exactly as it was (same size, mtime and inode).

The scan reuses the latest one as a job's starting point when it is recent
(:data:`REUSE_S`): one scan per job end, not two per job.
"""

import os
import stat
import time
from collections.abc import Callable, Iterable
from typing import Any, Optional

REUSE_S = 1.0
"""A job may start from a scan at most this old (a change since then counts for it too)."""

Entry = tuple[int, int, int, int, int]
"""(kind and mode, size, mtime_ns, inode, device) of one path."""


def scan(root: str, skip_dirs: Iterable[str]) -> dict[str, Entry]:
    """Every file, link and folder under ``root``, relative path -> :data:`Entry` (a folder
    as ``NAME/``, by its mode and inode only: its mtime changes with what is inside);
    ``skip_dirs`` (absolute) are not entered, nor listed."""
    skipped = {os.path.abspath(d) for d in skip_dirs}
    found: dict[str, Entry] = {}
    pending = [os.path.abspath(root)]
    prefix = len(pending[0]) + 1
    while pending:
        folder = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                if entry.name != "__pycache__" and entry.path not in skipped:
                    pending.append(entry.path)
                    found[entry.path[prefix:] + os.sep] = (st.st_mode, 0, 0, st.st_ino, st.st_dev)
                continue
            found[entry.path[prefix:]] = (
                st.st_mode,
                st.st_size,
                st.st_mtime_ns,
                st.st_ino,
                st.st_dev,
            )
    return found


def changed(before: dict[str, Entry], after: dict[str, Entry]) -> list[str]:
    """Paths created, removed or changed between two scans."""
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))


class TreeWatch:
    """The working directory's files at each watched job's start, compared at its end.

    ``declared(rel)``: whether a job of the workflow declares the path (relative to the
    working directory); ``skip_dirs``: folders never scanned (``.snakemake``, the store)."""

    def __init__(
        self,
        workdir: str,
        declared: Callable[[str], bool],
        skip_dirs: Iterable[str] = (),
        clock: Callable[[], float] = time.monotonic,
        scanner: Callable[[str, Iterable[str]], dict[str, Entry]] = scan,
    ) -> None:
        self.workdir = os.path.abspath(workdir)
        self.declared = declared
        self.skip_dirs = [os.path.abspath(d) for d in skip_dirs]
        self._clock = clock
        self._scan = scanner
        self._latest: Optional[tuple[float, dict[str, Entry]]] = None
        self._started: dict[Any, dict[str, Entry]] = {}

    def started(self, job: Any) -> None:
        """Note the tree as ``job`` starts (the latest scan, if recent)."""
        now = self._clock()
        if self._latest is None or now - self._latest[0] > REUSE_S:
            self._latest = (now, self._scan(self.workdir, self.skip_dirs))
        self._started[job] = self._latest[1]

    def ended(self, job: Any) -> Optional[list[str]]:
        """The undeclared paths that changed while ``job`` ran (relative, sorted); None if
        it was not watched."""
        before = self._started.pop(job, None)
        if before is None:
            return None
        now = self._clock()
        after = self._scan(self.workdir, self.skip_dirs)
        self._latest = (now, after)
        return [p for p in changed(before, after) if not self.declared(p)]

    def forget(self, job: Any) -> None:
        """A job that failed: nothing to compare."""
        self._started.pop(job, None)


class Declared:
    """Whether a relative path is declared by some job: an output, log or benchmark, a path
    inside a ``directory()`` output (given as folders), or a folder holding one of those
    (Snakemake creates an output's folders)."""

    def __init__(self, files: Iterable[str], folders: Iterable[str]) -> None:
        self.files = {os.path.normpath(f) for f in files}
        self.folders = sorted({os.path.normpath(f).rstrip(os.sep) + os.sep for f in folders})
        self.parents: set[str] = set()
        for f in self.files:
            parent = os.path.dirname(f)
            while parent and parent + os.sep not in self.parents:
                self.parents.add(parent + os.sep)
                parent = os.path.dirname(parent)

    def __call__(self, rel: str) -> bool:
        if rel in self.files or rel.rstrip(os.sep) in self.files or rel in self.parents:
            return True
        return any(rel.startswith(folder) for folder in self.folders)
