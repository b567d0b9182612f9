"""What a cell does that its names do not show: files, directory listings, processes, threads,
the global random number generators, and which names share objects.

Used by the kernel around each audited cell. Three observers:

- :class:`FileWatch`: a ``sys.addaudithook`` hook, active only while a cell runs, that sees every
  ``open`` (however its path was computed: ``os.path.join``, ``Path.glob``, a library's own
  ``open``), ``os.remove``/``os.rename``, directory listings (``os.scandir``/``os.listdir``,
  which ``glob`` and ``Path.glob`` use), and the start of processes. A file's digest is taken at
  its first read, before the cell can change it. Files written without Python's ``open`` (C
  extensions) are caught by a snapshot of the working directory taken around the cell.
- RNG states (``random``, numpy's legacy global ``RandomState``, torch's default generator when
  torch is imported) as pseudo-names (:data:`RNG_NAMES`), restored lazily: a state waiting for
  a module not yet imported is applied right after its import (:class:`_AfterImport`).
- :func:`alias_groups`: names whose values share mutable objects (``alias = cfg``,
  ``p = cfg["model"]``), so that they are checkpointed and restored as one object graph.
"""

import gc
import hashlib
import importlib.abc
import importlib.machinery
import os
import pickle
import re
import sys
import threading
import types
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

# ---- global random number generators -------------------------------------------------------

RNG_RANDOM = "<random>"
RNG_NUMPY = "<numpy.random>"
RNG_TORCH = "<torch>"
RNG_NAMES = (RNG_RANDOM, RNG_NUMPY, RNG_TORCH)
RNG_INITIAL = "rng:initial"
"""The read hash of a generator no cell has set yet in this kernel: its state is the random one
of a fresh process, so any state is as good as another (a fresh run's is random too)."""
_RNG_MODULE = {RNG_RANDOM: "random", RNG_NUMPY: "numpy.random.mtrand", RNG_TORCH: "torch"}


def is_rng(name: str) -> bool:
    return name in _RNG_MODULE


def rng_state(name: str) -> Optional[Any]:
    """The generator's state now, or None when its module is not imported."""
    module = sys.modules.get(_RNG_MODULE[name])
    if module is None:
        return None
    if name == RNG_RANDOM:
        return module.getstate()
    if name == RNG_NUMPY:
        # Plain Python values: unpickling the state must not import numpy by itself.
        kind, keys, pos, has_gauss, gauss = module._rand.get_state()
        return (kind, keys.astype("<u4").tobytes(), int(pos), int(has_gauss), float(gauss))
    return bytes(module.get_rng_state().numpy().tobytes())


def rng_blob(state: Any) -> bytes:
    return pickle.dumps(state, protocol=5)


def _set_state(name: str, module: Any, state: Any) -> None:
    if name == RNG_RANDOM:
        module.setstate(state)
    elif name == RNG_NUMPY:
        import numpy

        kind, keys, pos, has_gauss, gauss = state
        keys = numpy.frombuffer(keys, dtype="<u4").astype(numpy.uint32)
        module._rand.set_state((kind, keys, pos, has_gauss, gauss))
    else:
        module.set_rng_state(module.frombuffer(bytearray(state), dtype=module.uint8))


def set_rng_state(name: str, blob: bytes) -> None:
    """Set a generator's state now, or as soon as its module is imported (so restoring the
    state of numpy's or torch's generator never imports them by itself)."""
    state = pickle.loads(blob)
    module_name = _RNG_MODULE[name]
    module = sys.modules.get(module_name)
    if module is not None:
        _AFTER_IMPORT.pending.pop(module_name, None)
        _set_state(name, module, state)
        return
    _AFTER_IMPORT.install()
    _AFTER_IMPORT.pending[module_name] = lambda m: _set_state(name, m, state)


def when_imported(module_name: str, then: Callable[[types.ModuleType], None]) -> None:
    """Call ``then(module)`` now if the module is loaded, else right after its first import
    (after any callback already waiting for it)."""
    module = sys.modules.get(module_name)
    if module is not None:
        then(module)
        return
    _AFTER_IMPORT.install()
    earlier = _AFTER_IMPORT.pending.get(module_name)
    if earlier is None:
        _AFTER_IMPORT.pending[module_name] = then
        return

    def both(m: types.ModuleType) -> None:
        earlier(m)
        then(m)

    _AFTER_IMPORT.pending[module_name] = both


def is_deferred(name: str) -> bool:
    """A state waits for its module's import (so the kernel still knows which state it is)."""
    return _RNG_MODULE[name] in _AFTER_IMPORT.pending


class _Loader(importlib.abc.Loader):
    def __init__(self, loader: Any, then: Callable[[types.ModuleType], None]) -> None:
        self.loader, self.then = loader, then

    def create_module(self, spec: Any) -> Any:
        return self.loader.create_module(spec)

    def exec_module(self, module: types.ModuleType) -> None:
        self.loader.exec_module(module)
        self.then(module)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs a callback right after a module is first imported."""

    def __init__(self) -> None:
        self.pending: dict[str, Callable[[types.ModuleType], None]] = {}

    def install(self) -> None:
        if self not in sys.meta_path:
            sys.meta_path.insert(0, self)

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        then = self.pending.pop(fullname, None)
        if then is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _Loader(spec.loader, then)
                return spec
        return None


_AFTER_IMPORT = _AfterImport()


# ---- files, listings, processes ----------------------------------------------------------------

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_PROCESS_EVENTS = (
    "subprocess.Popen",
    "os.system",
    "os.exec",
    "os.posix_spawn",
    "os.spawn",
    "os.fork",
    "os.forkpty",
    "pty.spawn",
)
SNAPSHOT_MAX = 5000
"""At most this many files in the working directory are compared around each cell."""


def ignored_roots() -> tuple[str, ...]:
    """Where the interpreter, the installed libraries and per-user caches live: not the
    notebook's files."""
    home = os.path.expanduser("~")
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, "/proc", "/sys", "/dev", "/usr"}
    roots |= {os.path.join(home, d) for d in (".cache", ".config", ".ipython", ".local")}
    roots |= {p for p in sys.path if p and os.path.isdir(p) and "site-packages" in p}
    return tuple(sorted(os.path.join(os.path.abspath(r), "") for r in roots if r))


def digest_file(path: str) -> Optional[str]:
    try:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                h.update(chunk)
    except OSError:
        return None
    return "sha256:" + h.hexdigest()


def listing_digest(path: str) -> Optional[str]:
    """Identity of a directory's entry names (what ``glob`` sees), or None if it is none."""
    try:
        names = sorted(os.listdir(path))
    except OSError:
        return None
    return "sha256:" + hashlib.sha256("\0".join(names).encode()).hexdigest()


@dataclass
class Observed:
    """What one cell did to the file system. Paths are as :func:`record_path` gives them."""

    files_read: dict[str, Optional[str]] = field(default_factory=dict)
    dirs_read: dict[str, Optional[str]] = field(default_factory=dict)
    files_written: set[str] = field(default_factory=set)
    processes: list[str] = field(default_factory=list)
    env_read: dict[str, Optional[str]] = field(default_factory=dict)
    """Environment variables the cell's Python code read (``os.environ[...]``, ``.get``,
    ``in``) -> the value it saw (None: unset); ``*`` -> a digest of all names when it listed
    them."""
    stats_read: dict[str, Optional[str]] = field(default_factory=dict)
    """Paths the cell asked about without opening them (``os.path.exists``, ``getsize``,
    ``Path.is_file``: ``os.stat``/``os.lstat``, which raise no audit event) -> what it saw
    (:func:`stat_signature`)."""


def stat_signature(path: str) -> Optional[str]:
    """What a stat call tells a program about a path: none, a directory, or a file of a size."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    import stat as stat_module

    if stat_module.S_ISDIR(st.st_mode):
        return "dir"
    return f"file:{st.st_size}"


def record_path(path: str, cwd: str) -> str:
    """Relative to the working directory when inside it, else absolute."""
    absolute = os.path.abspath(path)
    rel = os.path.relpath(absolute, cwd)
    return absolute if rel == ".." or rel.startswith(".." + os.sep) else rel


class FileWatch:
    """The audit hook (installed once per process; idle outside :meth:`watching`)."""

    def __init__(self) -> None:
        self._active: Optional[Observed] = None
        self._busy = threading.local()
        self._installed = False
        self._ignored: tuple[str, ...] = ()
        self._cwd = ""
        self.extra_ignored: tuple[str, ...] = ()
        self.importing: Callable[[], bool] = lambda: False
        """Whether a module is being imported now (set by the kernel): environment reads of
        an import are that module's, done again by a fresh import."""

    def start(self, ignore: Iterable[str] = (), cwd: Optional[str] = None) -> Observed:
        if not self._installed:
            sys.addaudithook(self._hook)
            self._installed = True
        self._watch_stat()
        self._ignored = ignored_roots() + tuple(
            os.path.join(os.path.abspath(p), "") for p in ignore
        )
        self._cwd = cwd or os.getcwd()
        self._active = Observed()
        return self._active

    def stop(self) -> Optional[Observed]:
        observed, self._active = self._active, None
        os.stat, os.lstat = _REAL_STAT, _REAL_LSTAT
        _ENVIRON_CLASS.__getitem__ = _REAL_ENV_GETITEM  # type: ignore[method-assign]
        _ENVIRON_CLASS.__iter__ = _REAL_ENV_ITER  # type: ignore[method-assign]
        if observed is not None:
            for path in observed.files_written | set(observed.files_read):
                observed.stats_read.pop(path, None)
        return observed

    def _watch_stat(self) -> None:
        """``os.stat``/``os.lstat`` raise no audit event: while a cell runs they are wrapped,
        so ``os.path.exists(p)``, ``getsize``, ``Path.is_file()`` on a computed path count as
        reads of what they saw."""
        watch = self

        def seen(real: Callable[..., Any]) -> Callable[..., Any]:
            def stat(path: Any, *args: Any, **kwargs: Any) -> Any:
                if (
                    watch._active is not None
                    and not getattr(watch._busy, "on", False)
                    and isinstance(path, str | bytes | os.PathLike)
                    and not kwargs.get("dir_fd")
                ):
                    watch._stat(os.fsdecode(path))
                return real(path, *args, **kwargs)

            return stat

        os.stat, os.lstat = seen(_REAL_STAT), seen(_REAL_LSTAT)

        def getitem(environ: Any, key: Any) -> Any:
            active = watch._active
            if (
                active is not None
                and environ is os.environ
                and isinstance(key, str)
                and not key.startswith(_PER_RUN_VARIABLES)
                and not watch.importing()
                and not _own_code()
            ):
                if key not in active.env_read:
                    try:
                        active.env_read[key] = _REAL_ENV_GETITEM(environ, key)
                    except KeyError:
                        active.env_read[key] = None
            return _REAL_ENV_GETITEM(environ, key)

        def iterate(environ: Any) -> Any:
            active = watch._active
            if (
                active is not None
                and environ is os.environ
                and "*" not in active.env_read
                and not watch.importing()
                and not _own_code()
            ):
                active.env_read["*"] = environ_names_digest(list(_REAL_ENV_ITER(environ)))
            return _REAL_ENV_ITER(environ)

        _ENVIRON_CLASS.__getitem__ = getitem  # type: ignore[method-assign]
        _ENVIRON_CLASS.__iter__ = iterate  # type: ignore[method-assign]

    def _stat(self, path: str) -> None:
        observed = self._active
        assert observed is not None
        absolute = os.path.abspath(path)
        key = record_path(absolute, self._cwd)
        if key in observed.stats_read or key in observed.files_written:
            return
        if self._skip(absolute) or self._on_the_way(absolute) or _from_import_system():
            return
        self._busy.on = True
        try:
            observed.stats_read[key] = stat_signature(absolute)
        finally:
            self._busy.on = False

    def _on_the_way(self, absolute: str) -> bool:
        """A directory above the interpreter's, the home's or the working directory's own
        (``os.path.realpath`` stats every component of a library's path): not a question a
        cell asks about its data."""
        prefix = os.path.join(absolute, "")
        return any(
            root.startswith(prefix) for root in (*self._ignored, os.path.join(self._cwd, ""))
        )

    def _skip(self, absolute: str) -> bool:
        return (
            absolute.startswith(self._ignored)
            or f"{os.sep}__pycache__{os.sep}" in absolute
            or absolute.endswith((".pyc", ".ipynb"))
        )

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        observed = self._active
        if observed is None or getattr(self._busy, "on", False):
            return
        if event == "open":
            path, mode, flags = args
            if path is None or isinstance(path, int) or _from_import_system():
                return
            # Appending is reading too: what the file holds after depends on what it held.
            if mode is not None:
                writes = any(c in str(mode) for c in "wax+")
                reads = any(c in str(mode) for c in "ra+")
            else:
                writes = bool(flags & _WRITE_FLAGS)
                reads = not (flags & os.O_WRONLY) or bool(flags & os.O_APPEND)
            self._file(os.fsdecode(path), reads, writes)
        elif event in ("os.remove", "os.truncate"):
            if not isinstance(args[0], int):
                self._file(os.fsdecode(args[0]), False, True)
        elif event == "os.rename":
            self._file(os.fsdecode(args[0]), False, True)
            self._file(os.fsdecode(args[1]), False, True)
        elif event in ("pathlib.Path.glob", "pathlib.Path.rglob"):
            # Path.glob does not list a directory that does not exist: still a read (of none)
            self._listing(os.fsdecode(args[0]))
        elif event in ("os.listdir", "os.scandir"):
            path = args[0] if args and args[0] is not None else "."
            if isinstance(path, int) or _from_import_system():
                return
            self._listing(os.fsdecode(path))
        elif event == "sqlite3.connect":
            database = args[0] if args else None
            if isinstance(database, str | bytes | os.PathLike) and os.fsdecode(database) not in (
                "",
                ":memory:",
            ):
                self._file(os.fsdecode(database), True, False)
        elif event in _PROCESS_EVENTS:
            observed.processes.append(event)

    def _file(self, path: str, reads: bool, writes: bool) -> None:
        observed = self._active
        assert observed is not None
        absolute = os.path.abspath(path)
        if self._skip(absolute) or os.path.isdir(absolute):
            return
        key = record_path(absolute, self._cwd)
        if reads and key not in observed.files_written and key not in observed.files_read:
            self._busy.on = True
            try:
                observed.files_read[key] = digest_file(absolute)
            finally:
                self._busy.on = False
        if writes:
            observed.files_written.add(key)

    def _listing(self, path: str) -> None:
        observed = self._active
        assert observed is not None
        absolute = os.path.abspath(path)
        if self._skip(os.path.join(absolute, "")):
            return
        key = record_path(absolute, self._cwd)
        if key not in observed.dirs_read:
            self._busy.on = True
            try:
                observed.dirs_read[key] = listing_digest(absolute)
            finally:
                self._busy.on = False


_PER_RUN_VARIABLES = ("JPY_", "NBREWIND_", "PYDEVD_", "IPYKERNEL_")
"""Variables the kernel's launch sets anew for every run (a fresh run's differ too)."""
_ENVIRON_CLASS = type(os.environ)
_REAL_ENV_GETITEM = _ENVIRON_CLASS.__getitem__
_REAL_ENV_ITER = _ENVIRON_CLASS.__iter__


_OWN = ("nbrewind.", "stickyinvoc.")


def _own_code() -> bool:
    """The caller (within a few frames) is this package's or the fingerprint's own code (the
    process fingerprint reads the whole environment around every import)."""
    frame: Optional[types.FrameType] = sys._getframe(2)
    for _ in range(4):
        if frame is None:
            return False
        if str(frame.f_globals.get("__name__", "")).startswith(_OWN):
            return True
        frame = frame.f_back
    return False


def environ_names_digest(data: Iterable[str]) -> str:
    """Identity of the set of environment variable names (what listing them shows)."""
    names = sorted(data)
    return "sha256:" + hashlib.sha256("\0".join(names).encode()).hexdigest()


def environment_reads_now(reads: Mapping[str, Optional[str]], environ: Mapping[str, str]) -> str:
    """The first variable of ``reads`` whose value differs in ``environ`` ('' if none)."""
    for name, value in sorted(reads.items()):
        if name == "*":
            now = "sha256:" + hashlib.sha256("\0".join(sorted(environ)).encode()).hexdigest()
            if now != value:
                return "the set of environment variables"
        elif environ.get(name) != value:
            return f"environment variable {name}"
    return ""


_REAL_STAT = os.stat
_REAL_LSTAT = os.lstat
_IMPORT_SYSTEM = ("<frozen importlib", "<frozen zipimport")
_IMPORT_SYSTEM_DIRS = tuple(
    os.path.join(os.path.dirname(os.__file__), d, "") for d in ("importlib", "pkgutil.py")
)


def _from_import_system() -> bool:
    """Files and listings the import system and package metadata read (its path finder's
    cache, ``importlib.metadata`` scanning ``sys.path``) are not the cell's reads."""
    frame: Optional[types.FrameType] = sys._getframe(2)
    for _ in range(12):
        if frame is None:
            return False
        name = frame.f_code.co_filename
        if name.startswith(_IMPORT_SYSTEM) or name.startswith(_IMPORT_SYSTEM_DIRS):
            return True
        if "pkg_resources" in name:
            return True
        frame = frame.f_back
    return False


def snapshot(root: str, limit: int = SNAPSHOT_MAX) -> Optional[dict[str, tuple[int, int]]]:
    """Files under ``root`` (hidden directories and notebooks skipped) by modification time and
    size; None if there are more than ``limit`` (too many to compare around every cell)."""
    found: dict[str, tuple[int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d != "__pycache__"]
        for filename in filenames:
            if filename.startswith(".") or filename.endswith(".ipynb"):
                continue
            path = os.path.join(dirpath, filename)
            try:
                st = os.stat(path)
            except OSError:
                continue
            found[os.path.relpath(path, root)] = (st.st_mtime_ns, st.st_size)
            if len(found) > limit:
                return None
    return found


def snapshot_changes(
    before: Optional[Mapping[str, tuple[int, int]]], after: Optional[Mapping[str, tuple[int, int]]]
) -> set[str]:
    if before is None or after is None:
        return set()
    return {p for p in set(before) | set(after) if before.get(p) != after.get(p)}


def live_threads() -> set[int]:
    """The threads alive now, but for the interpreter's own bookkeeping (:func:`_bookkeeping`)."""
    return {t.ident or 0 for t in threading.enumerate() if t.is_alive() and not _bookkeeping(t)}


def _bookkeeping(thread: threading.Thread) -> bool:
    """A thread that touches none of the notebook's data: IPython's history writer, which
    only writes IPython's own history database. IPython 9 starts it lazily, in whichever cell
    first saves history (after a ``!`` command, for instance): counting it would call that
    cell's effects unknowable and re-execute it on every repeat."""
    cls = type(thread)
    return cls.__name__ == "HistorySavingThread" and cls.__module__.startswith("IPython.")


# ---- names that share objects ------------------------------------------------------------------

REACH_MAX = 100_000
"""Objects visited per value when looking for shared ones (beyond it, sharing may be missed)."""
_ATOMS = (int, float, complex, str, bytes, bool, type(None), range, slice)
_OPAQUE = (
    types.ModuleType,
    type,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.CodeType,
    types.FrameType,
)


def _type_module(obj: Any) -> str:
    module = getattr(type(obj), "__module__", "")
    return module if isinstance(module, str) else ""


def _is_atom(obj: Any) -> bool:
    if isinstance(obj, _ATOMS):
        return True
    module = _type_module(obj)
    # numpy scalars and dtypes, pandas Index objects: immutable, sharing them is invisible
    if module.startswith("numpy") and type(obj).__name__ != "ndarray":
        return True
    return module.startswith("pandas") and type(obj).__name__.endswith("Index")


def _is_leaf(obj: Any) -> bool:
    """Arrays and data frames: their identity counts, what they share inside does not (pickle
    copies views and blocks apart anyway, and pandas links frames it derived from each
    other)."""
    return _type_module(obj).startswith(("numpy", "pandas"))


def _notebook_defined(obj: Any) -> bool:
    return isinstance(obj, types.FunctionType | type) and getattr(obj, "__module__", "") in (
        "__main__",
        None,
    )


def _function_parts(obj: Any) -> list[Any]:
    """What a function or bound method holds that other names may share: defaults, closure
    cells' contents, its attributes, a method's object (not its globals, not its code)."""
    if isinstance(obj, types.MethodType):
        return [obj.__self__, obj.__func__]
    if isinstance(obj, types.BuiltinMethodType):
        return [obj.__self__]  # lst.append: the list
    parts: list[Any] = list(obj.__defaults__ or ())
    parts.extend((obj.__kwdefaults__ or {}).values())
    for cell in obj.__closure__ or ():
        try:
            parts.append(cell.cell_contents)
        except ValueError:  # an empty cell
            continue
    parts.extend(obj.__dict__.values())
    return parts


def reachable(value: Any, limit: int = REACH_MAX) -> frozenset[int]:
    """Ids of the mutable objects reachable from ``value`` through containers, instance
    attributes, functions' defaults, closures and attributes, and bound methods' objects (not
    through globals, classes' members or modules, which reach the whole namespace). Functions
    and classes defined in the notebook count themselves, and an instance its class, so a
    registry holding a function, a default argument that is a global list, or an instance and
    its class are restored as one object graph."""
    if _is_atom(value) or (
        isinstance(value, _OPAQUE) and not (_traversed(value) or _notebook_defined(value))
    ):
        return frozenset()
    seen: set[int] = set()
    found: set[int] = set()
    todo = [value]
    while todo and len(seen) < limit:
        obj = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if _is_atom(obj):
            continue
        if isinstance(obj, _OPAQUE):
            if _notebook_defined(obj):
                found.add(id(obj))
            if _traversed(obj):
                todo.extend(_function_parts(obj))
            continue
        if not isinstance(obj, tuple | frozenset):
            found.add(id(obj))
        if _is_leaf(obj):
            # A numpy view shares its base's memory: the base is reached too, so a view and
            # its array are one group (their change through either is one change).
            base = getattr(obj, "base", None)
            while base is not None and type(base).__name__ == "ndarray":
                found.add(id(base))
                base = getattr(base, "base", None)
            continue
        todo.extend(gc.get_referents(obj))
    return frozenset(found)


def _traversed(value: Any) -> bool:
    """Notebook functions and bound methods are looked into (a library's functions hold
    nothing of the notebook's, and pickle by reference)."""
    if isinstance(value, types.MethodType):
        return True
    if isinstance(value, types.BuiltinMethodType):
        return not isinstance(value.__self__, types.ModuleType | type(None))
    return isinstance(value, types.FunctionType) and _notebook_defined(value)


_IPYTHON_NAME = re.compile(r"^(_+|_i+|_i\d+|_\d+|_oh|_ih|_dh|__\w+__)$")


def is_ipython_name(name: str) -> bool:
    """IPython's output and input history and module dunders: not the user's variables."""
    return _IPYTHON_NAME.match(name) is not None


def alias_groups(reach: Mapping[str, frozenset[int]]) -> dict[str, frozenset[str]]:
    """For each name, the names whose values share a mutable object with it (itself included),
    transitively."""
    parent = {name: name for name in reach}

    def find(name: str) -> str:
        while parent[name] != name:
            parent[name] = parent[parent[name]]
            name = parent[name]
        return name

    owner: dict[int, str] = {}
    for name in sorted(reach):
        for ident in reach[name]:
            other = owner.setdefault(ident, name)
            if other != name:
                parent[find(name)] = find(other)
    members: dict[str, set[str]] = {}
    for name in reach:
        members.setdefault(find(name), set()).add(name)
    return {name: frozenset(members[find(name)]) for name in reach}
