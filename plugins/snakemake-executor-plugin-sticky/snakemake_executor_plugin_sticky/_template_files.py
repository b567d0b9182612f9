"""The files a template's build created or read, watched across its jobs (worker side).

Under ``--executor local`` every job builds its template itself: a temporary directory, a
scratch folder or a file the build creates is that job's own, and what the build reads (a
checkpoint, a cache, a table, the listing of a folder) it reads as the jobs before left it. A
worker builds once and shares what it built on disk with all its jobs, in fork mode too (a
forked child has its own memory, not its own files). A job that deletes such a directory,
adds a file to it, rewrites such a file or updates what the build read would hand the next
job a state that a fresh build would not have made.

So the worker records the paths its build touched (its watch, :mod:`._audit`: created, written
where nothing was before, opened for reading, listed, or connected to as a SQLite database),
notes each one's kind, inode, size, mode and modification time after the build (and the
contents of files up to :data:`HASHED_UP_TO`), and compares them after every job. A change
retires the worker, with one warning naming the job and the paths; the next job gets a fresh
worker, whose build reads and creates afresh, as a fresh job's does. Only the paths themselves
are compared: a folder's listing changes its time, a file's contents its size or time (or, for
a small file rewritten with its old size and time, its contents; a small file written again
with the same bytes is not a change); a change inside a subfolder
the build did not touch is not seen, nor are files the build only looked for
(``os.path.exists``: no audit event) or that native code opened itself. At most
:data:`MAX_WATCHED` paths, the shallowest first.

A folder the build made under a fixed name (``os.makedirs("records", exist_ok=True)``) and
did not list is shared on disk in a fresh run too: another worker's build or job adding a file
there changes nothing a fresh build would see differently, so a new entry in it counts only
where the job itself wrote, removed or renamed something directly inside it (its audit watch,
:attr:`._audit.WriteWatch.wrote_in`; where that is not known, it counts). Its removal or
replacement always counts, as does any change of a folder ``tempfile`` made (a fresh build
gets a new, empty one; what a job's subprocess writes there is not seen by the audit watch).

Left out: the Python installation (its prefixes and site-packages: what imports read),
the folders on ``sys.path`` (the import system lists them), ``/proc``, ``/dev``, ``/sys``,
Snakemake's ``.snakemake`` folder, ``multiprocessing``'s own temporary folder (``pymp-*``,
where listener sockets come and go) and Python's ``__pycache__``.
"""

import hashlib
import os
import site
import stat
import sys
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Optional

from ._codekey import _installed_roots

MAX_WATCHED = 2000
"""The most paths watched per template (a build that unpacks more: its shallowest ones)."""

HASHED_UP_TO = 1 << 20
"""Regular files up to this size (bytes) are also hashed after the build: a rewrite that keeps
their size and modification time (an archive extracted with its stored times) is told from a
change of their inode's change time alone (a hard link added and removed, as a checkpoint
store stages outputs) by their contents."""

_State = tuple[int, int, int, int, int]  # mode, inode, device, size, mtime (ns)


@dataclass
class _Seen:
    state: _State
    ctime_ns: int
    digest: Optional[bytes]


def _seen(path: str) -> Optional[_Seen]:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    state = (st.st_mode, st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns)
    digest = None
    if stat.S_ISREG(st.st_mode) and st.st_size <= HASHED_UP_TO:
        digest = _digest(path)
    return _Seen(state, st.st_ctime_ns, digest)


def _digest(path: str) -> Optional[bytes]:
    try:
        with open(path, "rb") as f:
            return hashlib.blake2b(f.read(HASHED_UP_TO + 1), digest_size=16).digest()
    except OSError:
        return None


def _multiprocessing_tempdir() -> Optional[str]:
    """The ``pymp-*`` folder of this process, if multiprocessing made one."""
    process = sys.modules.get("multiprocessing.process")
    if process is None:
        return None
    try:
        found = process.current_process()._config.get("tempdir")
    except Exception:  # noqa: BLE001 - its private layout changed: nothing left out
        return None
    return os.path.abspath(found) if isinstance(found, str) else None


def _installation() -> list[str]:
    """Where Python and its packages are installed (what imports read): the prefixes
    (:func:`._codekey._installed_roots`) and the site-packages folders, wherever they are."""
    roots = {r.rstrip(os.sep) for r in _installed_roots()}
    try:
        roots.update(site.getsitepackages())
        roots.add(site.getusersitepackages())
    except AttributeError:  # a virtual environment's old site module
        pass
    return sorted({os.path.realpath(r) for r in roots} | roots)


def _left_out() -> tuple[list[str], set[str]]:
    """Folders whose contents are not watched, and paths not watched themselves."""
    roots = [*_installation(), "/proc", "/dev", "/sys"]
    pymp = _multiprocessing_tempdir()
    if pymp is not None:
        roots.append(pymp)
    on_path = {os.path.abspath(p or ".") for p in sys.path if isinstance(p, str)}
    return roots, on_path


def _watched(path: str, roots: list[str], on_path: set[str]) -> bool:
    parts = path.split(os.sep)
    if "__pycache__" in parts or ".snakemake" in parts or path in on_path:
        return False
    return not _within(path, roots)


@dataclass
class BuildFiles:
    """The paths one template's build made or used, as they were after it."""

    template: str
    states: dict[str, Optional[_Seen]]
    fixed_folders: frozenset[str] = frozenset()
    """Folders the build made under a fixed name and did not list: a new entry counts only
    where the job wrote inside them (see the module's docstring)."""

    @classmethod
    def after_build(
        cls,
        template: str,
        created: Sequence[str],
        read: Sequence[str] = (),
        listed: Optional[Collection[str]] = None,
        temporary: Collection[str] = (),
    ) -> "BuildFiles":
        """``listed``: every path the build listed or read (None: not known, a new entry in
        any folder it made counts, whoever added it); ``temporary``: the folders and files
        :mod:`tempfile` made for it."""
        roots, on_path = _left_out()
        paths = sorted(
            {p for p in [*created, *read] if _watched(p, roots, on_path)},
            key=lambda p: (p.count(os.sep), p),
        )[:MAX_WATCHED]
        fixed: frozenset[str] = frozenset()
        if listed is not None:
            made = set(created)
            fixed = frozenset(
                p
                for p in paths
                if p in made and p not in listed and os.path.isdir(p) and not _within(p, temporary)
            )
        return cls(template, {p: _seen(p) for p in paths}, fixed)

    def changed(self, wrote_in: Optional[Collection[str]] = None) -> list[str]:
        """The watched paths that are gone or not as they were, each with what happened;
        ``wrote_in``: where the job wrote (None: not known; see :attr:`fixed_folders`)."""
        found = []
        for path, before in self.states.items():
            try:
                st = os.lstat(path)
            except OSError:
                if before is not None:
                    found.append(f"{path} (removed)")
                continue
            if before is None:
                found.append(f"{path} (created)")
                continue
            state = (st.st_mode, st.st_ino, st.st_dev, st.st_size, st.st_mtime_ns)
            if state != before.state:
                if (
                    wrote_in is not None
                    and path in self.fixed_folders
                    and path not in wrote_in
                    and _identity(state) == _identity(before.state)
                ):
                    continue  # another process's entry in a shared folder
                if _rewritten_as_it_was(path, state, before):
                    before.state, before.ctime_ns = state, st.st_ctime_ns
                    continue  # the same bytes written again (another worker's build)
                found.append(f"{path} (changed)")
            elif st.st_ctime_ns != before.ctime_ns and before.digest is not None:
                if _digest(path) != before.digest:
                    found.append(f"{path} (changed)")
                else:  # its inode only (a link added or removed): not its contents
                    before.ctime_ns = st.st_ctime_ns
        return found


def _rewritten_as_it_was(path: str, state: _State, before: _Seen) -> bool:
    """A small file written again with the same bytes, mode and inode (only its time moved):
    what a fresh build reads from it is what this one read."""
    if before.digest is None or state[0] != before.state[0] or state[3] != before.state[3]:
        return False
    return _identity(state) == _identity(before.state) and _digest(path) == before.digest


def _identity(state: _State) -> tuple[int, int, int]:
    """A path's kind, inode and device: what it is, not what it holds."""
    return (stat.S_IFMT(state[0]), state[1], state[2])


def _within(path: str, roots: Collection[str]) -> bool:
    """Whether ``path`` is one of ``roots`` or inside one."""
    return any(path == r or path.startswith(r.rstrip(os.sep) + os.sep) for r in roots)


def _shown(changed: list[str]) -> str:
    """The first three changed paths, and how many more."""
    shown = ", ".join(changed[:3])
    if len(changed) > 3:
        shown += f" and {len(changed) - 3} more"
    return shown


def describe(template: str, changed: list[str]) -> str:
    """The retire reason for a job that changed files a template's build made or used
    (``template``: which one, where known)."""
    shown = _shown(changed)
    whose = f"the build of template {template!r}" if template else "a template's build"
    return (
        f"the job changed what {whose} made or used on disk: {shown} "
        "(a fresh job builds its own: make such files in the job, or leave the build's as "
        "they are)"
    )


def describe_stale(template: str, changed: list[str]) -> str:
    """Why a job was not run on this worker: what its template's build made or used changed
    after the last job, by another process (a job elsewhere, another rule's job)."""
    shown = _shown(changed)
    return (
        f"what the build of template {template!r} made or used on disk changed since its "
        f"last job: {shown}; the job runs on a fresh worker, whose build reads it as it is now"
    )
