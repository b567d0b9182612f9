"""Writes of a sticky invocation outside its declared outputs and logs (worker side).

A checkpoint restores a job's declared outputs, logs and benchmark, nothing else: a job that
also writes another file (a side file, a log it appends to, a file it deletes) would leave a
restored site different from a rerun. In a sticky worker the job runs in a process this
project controls, so such writes are seen, through :func:`sys.addaudithook`, while the
invocation's script runs: ``open`` for writing (also ``os.open``), ``os.rename``/``replace``,
``remove``/``unlink``, ``rmdir``, ``mkdir``, ``symlink``, ``link``, ``truncate``, ``chmod``,
and ``shutil``'s ``copyfile``, ``copymode``, ``copystat``, ``copytree``, ``move``, ``rmtree``.
The executor then does not store the job (it runs every time), with a warning naming the
paths. The watch wraps the script's execution inside the isolation
(:meth:`._isolation.Isolation._execute`): in ``fork`` mode it runs in the forked child, whose
writes come back with the child's pickled outcome.

Not counted: a path the invocation creates and removes again (a scratch file, the temporary
name of an atomic write), the folders of its outputs and logs (a restore makes them too), a
``mkdir`` of a folder that exists, ``__pycache__`` (Python's own byte code), and, outside the
working directory, the system temporary directory, ``/dev``, ``/proc`` and a DISTEA trace folder.
Not seen: what subprocesses the script starts write, and writes through a file descriptor
opened before the invocation (as for every job that does not run in a sticky worker, only
declared outputs are restored then).
"""

import contextlib
import os
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator
from typing import Any, Optional

WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND

# event -> positions of the paths it changes
_PATH_ARGS: dict[str, tuple[int, ...]] = {
    "os.rename": (0, 1),
    "os.replace": (0, 1),
    "os.remove": (0,),
    "os.rmdir": (0,),
    "os.mkdir": (0,),
    "os.symlink": (1,),
    "os.link": (1,),
    "os.truncate": (0,),
    "os.chmod": (0,),
    "shutil.copyfile": (1,),
    "shutil.copymode": (1,),
    "shutil.copystat": (1,),
    "shutil.copytree": (1,),
    "shutil.move": (0, 1),
    "shutil.rmtree": (0,),
}
# where a dir_fd argument sits (a path relative to a descriptor cannot be placed: counted)
_DIR_FD_ARGS: dict[str, tuple[int, ...]] = {
    "os.rename": (2, 3),
    "os.replace": (2, 3),
    "os.remove": (1,),
    "os.rmdir": (1,),
    "os.mkdir": (2,),
    "os.symlink": (2,),
    "os.link": (2, 3),
    "os.chmod": (2,),
    "shutil.rmtree": (1,),
}


# events that read a path (a build's watch records them: :meth:`WriteWatch.used`)
_READ_EVENTS = frozenset({"os.listdir", "os.scandir", "sqlite3.connect"})
# the garbage collector's walks of the objects it tracks, which frozen objects are left out of
_GC_WALKS = frozenset({"gc.get_objects", "gc.get_referrers"})
# tempfile's own events, raised after it made a folder or file of a new name
_TEMPFILE_EVENTS = frozenset({"tempfile.mkdtemp", "tempfile.mkstemp"})


class WriteWatch:
    """Collects undeclared writes while one invocation runs (one at a time per worker)."""

    def __init__(self, workdir: str, allowed: Iterable[str], build: bool = False) -> None:
        self.workdir = os.path.abspath(workdir)
        self.allowed = [os.path.abspath(p) for p in allowed]
        ignored = [tempfile.gettempdir(), "/dev", "/proc"]
        if os.environ.get("DISTEA_TRACE"):
            ignored.append(os.environ["DISTEA_TRACE"])
        self.ignored_outside = [os.path.realpath(p) for p in ignored] + ignored
        self.seen: dict[str, bool] = {}  # path -> whether it existed before its first write
        self.imports: list[str] = []
        """The modules imported while watched, in order (the ``import`` audit event: raised
        only for a module not in ``sys.modules`` yet, also where its import then fails)."""
        self.first: Optional[dict[str, bool]] = {} if build else None
        """With ``build`` (a template's build): every path written, wherever it is (the
        temporary directory too), and whether it existed before its first write (see
        :meth:`created`)."""
        self.reads: Optional[dict[str, None]] = {} if build else None
        """With ``build``: every path opened for reading (modules' sources too), every folder
        listed and every SQLite database connected to (see :meth:`used`)."""
        self.temporary: Optional[set[str]] = set() if build else None
        """With ``build``: the folders and files :mod:`tempfile` made (``mkdtemp``,
        ``mkstemp``: a fresh build gets new ones)."""
        self.gc_walks: set[str] = set()
        """The garbage collector's walks the watched code asked for (``gc.get_objects``,
        ``gc.get_referrers``): the template's objects are frozen, so they list none of them,
        where a fresh job's list its build's."""
        self.wrote_in: Optional[set[str]] = set()
        """Every path written, removed or renamed, and the folder it is in, wherever it is
        (a folder's listing changes only through these): None once a write could not be
        placed (a path relative to a directory descriptor)."""

    def note(self, path: Any, event: str = "open") -> None:
        if isinstance(path, int):
            return  # a descriptor: its file was opened (and counted) before
        try:
            name = os.path.abspath(os.fsdecode(path))
        except (TypeError, ValueError):
            return
        if self.wrote_in is not None:
            self.wrote_in.add(name)
            self.wrote_in.add(os.path.dirname(name))
        if self.first is not None and name not in self.first:
            if not (event == "os.mkdir" and os.path.isdir(name)):
                self.first[name] = os.path.lexists(name)
        if name in self.seen or not self._undeclared(name):
            return
        if event == "os.mkdir" and (
            os.path.isdir(name)  # already there: the mkdir changes nothing
            or any(a.startswith(name + os.sep) for a in self.allowed)  # an output's folder
        ):
            return
        self.seen[name] = os.path.lexists(name)

    def _undeclared(self, name: str) -> bool:
        if "__pycache__" in name.split(os.sep):
            return False
        for allowed in self.allowed:
            if name == allowed or name.startswith(allowed + os.sep):
                return False
        inside = name == self.workdir or name.startswith(self.workdir + os.sep)
        if not inside:
            for root in self.ignored_outside:
                if name == root or name.startswith(root.rstrip(os.sep) + os.sep):
                    return False
        return True

    def note_read(self, path: Any) -> None:
        if self.reads is None or isinstance(path, int):
            return
        try:
            self.reads.setdefault(os.path.abspath(os.fsdecode(path)), None)
        except (TypeError, ValueError):
            return

    def used(self) -> list[str]:
        """The paths read, listed, connected to (a SQLite database, and its write-ahead log)
        or written where they existed before, and there now (absolute): what the watched
        code used but did not create. Empty unless watched with ``build``."""
        first = self.first or {}
        found = {p: None for p, existed in first.items() if existed}
        found.update((p, None) for p in self.reads or {} if first.get(p, True))
        return [p for p in found if os.path.lexists(p)]

    def created(self) -> list[str]:
        """The paths that did not exist before the watched code first wrote them and exist
        now (absolute; ``__pycache__`` left out): what it created. Empty unless watched with
        ``build``."""
        return [
            p
            for p, existed in (self.first or {}).items()
            if not existed and "__pycache__" not in p.split(os.sep) and os.path.lexists(p)
        ]

    def undeclared(self) -> list[str]:
        """The undeclared paths the invocation changed: written and still there, or there
        before it wrote or removed them; relative to the working directory where inside it."""
        found = [p for p, existed in self.seen.items() if existed or os.path.lexists(p)]
        return sorted(
            os.path.relpath(p, self.workdir) if p.startswith(self.workdir + os.sep) else p
            for p in found
        )


_current: Optional[WriteWatch] = None
_busy = threading.local()
_installed = False


_hooks_added = 0


def _hook(event: str, args: tuple[Any, ...]) -> None:
    global _hooks_added
    watch = _current
    if watch is None or getattr(_busy, "on", False):
        return
    if event == "sys.addaudithook":  # raised to the hooks already there, ours first
        _hooks_added += 1
        return
    if event == "import":
        watch.imports.append(args[0])
        return
    if event in _GC_WALKS:
        watch.gc_walks.add(event)
        return
    if event in _TEMPFILE_EVENTS:
        if watch.temporary is not None and args and isinstance(args[0], (str, bytes)):
            watch.temporary.add(os.path.abspath(os.fsdecode(args[0])))
        return
    if event == "open":
        path, mode, flags = (tuple(args) + (None, None, None))[:3]
        writes = bool(mode and any(c in str(mode) for c in "wax+")) or bool(
            isinstance(flags, int) and flags & WRITE_FLAGS
        )
        if not writes:
            if watch.reads is not None:  # a build: what it read
                watch.note_read(path)
            return
        positions: tuple[int, ...] = (0,)
        args = (path,)
    elif event in _READ_EVENTS:
        if watch.reads is not None and args:
            path = "." if args[0] is None else args[0]
            watch.note_read(path)
            if event == "sqlite3.connect" and isinstance(path, (str, bytes, os.PathLike)):
                watch.note_read(os.fsdecode(path) + "-wal")  # where WAL mode writes first
        return
    else:
        found = _PATH_ARGS.get(event)
        if found is None:
            return
        positions = found
        if any(i < len(args) and args[i] not in (None, -1) for i in _DIR_FD_ARGS.get(event, ())):
            watch.seen.setdefault(f"<relative to a directory descriptor: {args[0]!r}>", True)
            watch.wrote_in = None
            return
    _busy.on = True
    try:
        for i in positions:
            if i < len(args):
                watch.note(args[i], event)
    except Exception:  # never break the user's script
        pass
    finally:
        _busy.on = False


def start(workdir: str, snakemake: Any) -> WriteWatch:
    """Watch the writes of the invocation about to run (its outputs and logs are allowed)."""
    return _watch(workdir, [*map(str, snakemake.output), *map(str, snakemake.log)])


def start_build(workdir: str) -> WriteWatch:
    """Watch the writes of a template build (nothing is declared for it), and what it creates
    and uses (:meth:`WriteWatch.created`, :meth:`WriteWatch.used`)."""
    return _watch(workdir, [], build=True)


def _watch(workdir: str, allowed: list[str], build: bool = False) -> WriteWatch:
    global _current, _installed
    if not _installed:
        sys.addaudithook(_hook)  # for the worker's lifetime: audit hooks cannot be removed
        _installed = True
    _current = WriteWatch(workdir, allowed, build)
    return _current


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """The worker's own writes while an invocation is watched (its temporary script)."""
    was = getattr(_busy, "on", False)
    _busy.on = True
    try:
        yield
    finally:
        _busy.on = was


def hooks_added() -> int:
    """How many audit hooks invocations added while watched (they cannot be removed: direct
    mode retires a worker that has one more)."""
    return _hooks_added


def stop() -> list[str]:
    """Stop watching; the undeclared paths of the invocation that ran."""
    global _current
    watch, _current = _current, None
    return watch.undeclared() if watch is not None else []
