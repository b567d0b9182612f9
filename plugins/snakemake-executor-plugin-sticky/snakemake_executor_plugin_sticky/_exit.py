"""A fresh interpreter's exit, for what one invocation started.

When ``python script.py`` (a ``script:`` job under ``--executor local``) runs off its end, the
interpreter finalises in this order (``Py_FinalizeEx``): the exit callbacks of ``threading``
(``concurrent.futures`` wakes and joins its pools there) and the join of every non-daemon
thread; the ``atexit`` handlers, newest first (among them the standard library's own:
``weakref.finalize`` objects marked ``atexit``, ``multiprocessing``'s exit function, which
runs its finalizers, terminates daemonic children and joins the others, and
``logging.shutdown``, which flushes and closes every handler); then the modules leave
``sys.modules``, the builtins go back to the interpreter's initial copy, the garbage collector
runs (an unreferenced module's globals are finalised while still bound) and the globals of the
modules still alive are cleared, newest first, so objects are finalised and files the script
left open are flushed and closed. Only then has the job ended. (Direct mode clears the
script's globals at once and collects them: the worker's modules stay.)

:class:`ExitScope` records, before an invocation, what already exists of each of those
per-process registries; :func:`fresh_exit` runs the sequence for what the invocation added.
In a forked child (fork mode) the registries are first emptied of what the template process
holds (:func:`forget_inherited`), so the child finalises exactly what its script made, and
never a thread pool, child process, finaliser or exit handler that belongs to the template's
state. The standard library's registration sites of exit callbacks (``atexit.register`` and
``threading._register_atexit`` in its source) are each classified in :data:`STDLIB_EXIT_HOOKS`;
a test reads the standard library's source and fails on one that is not.
"""

import _signal
import atexit
import builtins
import gc
import io
import logging
import mmap
import os
import sys
import threading
import time
import traceback
import types
import weakref
from collections.abc import Callable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any, Optional

THREAD_POOL_GRACE = 2.0
"""Seconds a ``concurrent.futures`` thread left idle by the script gets to end once woken."""

STDLIB_EXIT_HOOKS = {
    "logging/__init__.py": "logging.shutdown: handlers the invocation added are flushed and closed",
    "multiprocessing/util.py": "_exit_function: the invocation's finalizers and children",
    "weakref.py": "finalize._exitfunc: the invocation's finalize objects marked atexit",
    "threading.py": "_register_atexit itself: its callbacks run before threads are joined",
    "concurrent/futures/thread.py": "_python_exit: the invocation's thread pools woken, joined",
    "concurrent/futures/process.py": "_python_exit: the invocation's process pools shut down",
    "site.py": "readline history of an interactive session: never in a script",
    "rlcompleter.py": "readline completer of an interactive session: never in a script",
}
"""Every standard-library module that registers an exit callback, and what becomes of it."""


def _mp_util() -> Any:
    return sys.modules.get("multiprocessing.util")


def _mp_process() -> Any:
    return sys.modules.get("multiprocessing.process")


def _futures(kind: str) -> Any:
    return sys.modules.get(f"concurrent.futures.{kind}")


@dataclass
class ExitScope:
    """What the process held before an invocation, per registry (in a fork child, after
    :func:`forget_inherited`, only the template's finalize objects: :meth:`forked`)."""

    threads: set[threading.Thread] = field(default_factory=set)
    mp_finalizers: set[Any] = field(default_factory=set)
    mp_children: set[int] = field(default_factory=set)
    finalize_after: int = -1
    """``weakref.finalize`` objects up to this index (their creation order) were there before
    the invocation: the template's, never finalised by its exit."""
    handlers: set[int] = field(default_factory=set)
    finalize_registered: bool = True
    """Whether ``weakref.finalize``'s exit function was registered with ``atexit`` before the
    invocation (by the template's or the worker's first finalize object); a fork child whose
    template made none registers it at the script's first one, as a fresh job does."""

    @classmethod
    def now(cls) -> "ExitScope":
        util, process = _mp_util(), _mp_process()
        return cls(
            threads=set(threading.enumerate()),
            mp_finalizers=set(util._finalizer_registry) if util is not None else set(),
            mp_children=set(map(id, process._children)) if process is not None else set(),
            finalize_after=newest_finalizer(),
            handlers=set(map(id, logging._handlerList)),  # type: ignore[attr-defined]
        )

    @classmethod
    def forked(cls) -> "ExitScope":
        """In a fork child: every other registry was emptied (:func:`forget_inherited`); the
        template's finalize objects stay registered, as they must while the child holds
        their objects, and this scope leaves them out of the child's exit."""
        registered = bool(getattr(weakref.finalize, "_registered_with_atexit", True))
        return cls(finalize_after=newest_finalizer(), finalize_registered=registered)


def newest_finalizer() -> int:
    """The index of the newest live ``weakref.finalize`` object (-1: none). The registry is a
    dict in creation order, so only its last entry is looked at: in a forked child, reading
    all of them would write to each one's reference count and copy its page."""
    registry = weakref.finalize._registry  # type: ignore[attr-defined]
    for f in reversed(registry):
        return int(registry[f].index)
    return -1


def forget_inherited() -> None:
    """In a child just forked from the template process: drop the parent's entries from every
    per-process exit registry, as ``multiprocessing`` does in the children it forks, so that
    the child's exit never finalises, joins or terminates what belongs to the template (its
    ``weakref.finalize`` objects are left out by :meth:`ExitScope.forked` instead)."""
    atexit._clear()
    util, process = _mp_util(), _mp_process()
    if process is not None:
        process._children = set()
    if util is not None:
        util._finalizer_registry.clear()
        util._run_after_forkers()
    thread_pools = _futures("thread")
    if thread_pools is not None:
        thread_pools._threads_queues.clear()
    process_pools = _futures("process")
    if process_pools is not None:
        process_pools._threads_wakeups.clear()


@dataclass
class ExitResult:
    """How the invocation's exit went."""

    leftover: list[threading.Thread]
    """Threads still running (daemon threads, or pool threads that did not end)."""
    flush_failed: bool = False
    """Flushing the script's ``sys.stdout`` or ``sys.stderr`` raised: a fresh interpreter then
    exits with status 120 (CPython's ``flush_std_files``), whatever the script's status was."""


@dataclass
class Teardown:
    """What a fork child's exit tears down besides ``__main__`` (:func:`_finalize_modules`)."""

    modules: list[types.ModuleType] = field(default_factory=list)
    """The workflow's own modules the job imported, in import order (emptied as torn down)."""
    builtins_names: frozenset[str] = frozenset()
    """The builtins' names when the worker started: others (set by the template's build or
    the job) go with the teardown, as a fresh interpreter puts its initial copy back."""
    sys_names: frozenset[str] = frozenset()
    """``sys``'s names when the worker started: others go last, as ``sys``'s dict is cleared."""
    template_files: list[Callable[[], Any]] = field(default_factory=list)
    """Files the template's build left open (flushed by the worker before any job): a job's
    writes to them are flushed at its end, as a fresh job's teardown flushes its own."""


def fresh_exit(
    scope: ExitScope,
    namespace: Optional[dict[str, Any]],
    handlers: Optional[list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]]],
    teardown: Optional[Teardown] = None,
    find_files: bool = True,
) -> ExitResult:
    """Finalise what the invocation started, in the interpreter's order. ``namespace``: the
    script's globals (direct mode), cleared at once; None in a fork child, which finds its
    ``__main__`` in ``sys.modules``. ``handlers``: the ``atexit`` handlers the script
    registered (direct mode), or None to run this process's whole ``atexit`` list (a fork
    child, whose list holds only the invocation's).
    ``teardown``: what a fork child tears down besides ``__main__`` (:func:`_finalize_modules`);
    in direct mode only its ``template_files`` are used (flushed).
    ``find_files``: look for files still open among every live object (:func:`_finish_files`;
    a fork child whose script added an audit hook does not, since the hook would see the
    walk)."""
    collecting = gc.isenabled()
    if handlers is None:
        leftover = _shutdown_threads()
        atexit._run_exitfuncs()
        # From here on the worker's own steps allocate where a fresh exit's C code does not:
        # no young collection of theirs may reorder what the teardown finalises.
        collecting = gc.isenabled()
        gc.disable()
    else:
        leftover = _join_threads(scope)
        for fn, args, kwargs in reversed(handlers):
            _call(fn, *args, **kwargs)
    if handlers is not None or scope.finalize_registered:
        # No exit function of weakref's in the list, where a fresh job's sits before the
        # script's handlers: its pass runs after them.
        _run_finalize_objects(scope)
    if handlers is None:  # as finalize._exitfunc ends, or as if it had (below)
        weakref.finalize._shutdown = True  # type: ignore[attr-defined]
    _multiprocessing_exit(scope)
    _close_handlers(scope)
    _cancel_watchdog()
    flush_failed = _flush_std_files()
    if handlers is not None:  # direct mode: no collection before the teardown (below)
        _restore_std_streams()
    held = _held_by_threads(leftover) if find_files else None
    if handlers is None:  # the child's __main__ is found by name (nothing else holds it)
        teardown = teardown or Teardown()
        _finish_files(_finalize_modules(teardown, held, collecting), close=True)
        _finish_files(teardown.template_files, close=False)
        _end_resource_tracker()
    else:
        if namespace is not None:
            namespace.clear()
            gc.collect()
        if held is not None:
            _finish_files(_open_files(held), close=False)
        if teardown is not None:  # the template's files, which the walk above skips (frozen)
            _finish_files(teardown.template_files, close=False)
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None and not stream.closed:
                stream.flush()
        except Exception:  # noqa: BLE001 - a closed or broken stream: as at exit, go on
            pass
    flush_c_streams()
    return ExitResult(leftover, flush_failed)


def _c_fflush() -> Optional[Callable[[Any], Any]]:
    try:
        import ctypes

        return ctypes.CDLL(None).fflush  # looked up once: a call raises no audit event
    except Exception:  # noqa: BLE001 - no C library to call (not POSIX)
        return None


_FFLUSH = _c_fflush()


def flush_c_streams() -> None:
    """C's ``exit()``, after the interpreter's: every C ``FILE`` stream flushed
    (``fflush(NULL)``), so what a C or Fortran library wrote with ``fprintf`` to a file it
    never closed reaches the file, as in a fresh job. A job's process never calls ``exit()``
    (fork mode ends as ``os._exit``; direct mode's worker goes on): the stream stays open in
    direct mode, its content written."""
    if _FFLUSH is not None:
        _FFLUSH(None)


LATE_BUILTINS = ("open", "exit", "quit", "help", "copyright", "credits", "license")
"""Builtins added after the interpreter's initial copy of the builtins (``open`` by the io
module's start, the others by ``site``): its teardown puts that copy back first, so a
``__del__`` running then finds no ``open`` (a test reads a real interpreter's teardown)."""

_SYS_DELETES = (
    "path", "argv", "ps1", "ps2", "last_type", "last_value", "last_traceback",
    "path_hooks", "path_importer_cache", "meta_path", "__interactivehook__",
)  # fmt: skip
"""``sys`` attributes a fresh interpreter sets to None before any module's teardown
(``finalize_modules_delete_special``): an import in a ``__del__`` then fails."""

_SYS_RESTORED = ("path", "path_hooks", "path_importer_cache", "meta_path")


def _finalize_modules(
    teardown: Teardown, held: Optional[AbstractSet[int]], collecting: bool
) -> list[Callable[[], Any]]:
    """A fork child: CPython's ``finalize_modules`` for ``__main__`` and the workflow's own
    modules the script imported (``teardown.modules``, emptied, so that no reference here
    keeps them alive). First a collection with the modules loaded (below; where the collector
    was on, ``collecting``), the script's standard streams still in place (a ``__del__`` it
    runs writes to a log the script put on ``sys.stderr``). Then, as the interpreter: the
    standard streams put back, ``sys``'s special attributes set to None (an import fails
    from here on, as with its ``sys.meta_path`` gone; ``sys.is_finalizing()`` is true; the
    signal handlers the script set are dropped, as ``_PySignal_Fini`` does); the modules
    removed from ``sys.modules`` one by one, ``__main__`` first (one that nothing else holds
    dies at once, its objects finalised with the builtins still whole); the builtins as the
    interpreter's initial copy (no ``open``, nothing the build or the job added); a garbage
    collection (a module's globals in a cycle are finalised while still bound;
    ``gc.callbacks`` are not called, then or after); the globals of modules still alive
    cleared, newest first (:func:`clear_modules`); what the build or the job set on ``sys``,
    last. The import machinery, ``sys.is_finalizing`` and the builtins are put back after
    it, for the child's own last steps. Returns the files open after the first collection
    (:func:`_open_files`, but those in ``held``; none when ``held`` is None): looking for them
    before it would change the order in which it finalises a cycle's objects."""
    # As the young collections during a fresh run leave the heap: garbage cycles go (a file
    # in one loses what it buffered: its raw layer, made first, is finalised first), and what
    # survives is ordered as reached from the modules' globals (a file's text layer before
    # its raw layer, so the teardown's collection flushes it before closing it).
    if collecting:
        gc.collect()  # Py_FinalizeEx's PyGC_Collect: a __del__ still writes to the script's streams
    _restore_std_streams()  # finalize_modules' first step
    files = _open_files(held) if held is not None else []
    loaded = sys.modules
    # Only the import machinery is put back (sys.last_traceback would keep the script's
    # frames, and so its globals, alive through the collection).
    saved_sys = {name: getattr(sys, name) for name in _SYS_RESTORED if hasattr(sys, name)}
    saved_finalizing, saved_import = sys.is_finalizing, builtins.__import__
    space = vars(builtins)
    saved_builtins: dict[str, Any] = {}
    alive: list[Any] = []
    try:
        for name in _SYS_DELETES:
            if hasattr(sys, name):
                setattr(sys, name, None)
        if "_" in space:
            space["_"] = None
        sys.is_finalizing = _finalizing
        builtins.__import__ = _import_at_shutdown
        _drop_signal_handlers()
        main = loaded.pop("__main__", None)
        if isinstance(main, types.ModuleType):
            alive.append(weakref.ref(main))
        del main
        modules = teardown.modules
        while modules:  # in import order; the list keeps none of them alive
            module = modules.pop(0)
            alive.append(weakref.ref(module))
            module_name = vars(module).get("__name__")
            if isinstance(module_name, str) and loaded.get(module_name) is module:
                del loaded[module_name]
            del module
        saved_builtins = {name: space.pop(name) for name in LATE_BUILTINS if name in space}
        if teardown.builtins_names:  # what the build or the job added dies once they are gone
            added = [space.pop(n) for n in list(space) if n not in teardown.builtins_names]
            del added
        gc.callbacks.clear()
        gc.collect()
        clear_modules([m for m in (ref() for ref in alive) if m is not None])
        if teardown.sys_names:  # sys's dict is cleared last (its hooks gone by then)
            hook, sys.excepthook = sys.excepthook, None  # type: ignore[assignment]
            try:
                for name in [n for n in list(vars(sys)) if n not in teardown.sys_names]:
                    if name not in saved_sys:
                        vars(sys).pop(name, None)
            finally:
                sys.excepthook = hook
    finally:
        for name, value in saved_sys.items():
            setattr(sys, name, value)
        sys.is_finalizing = saved_finalizing
        builtins.__import__ = saved_import
        space.update(saved_builtins)
    return files


def _restore_std_streams() -> None:
    """As ``finalize_modules`` starts: ``sys.stdin``/``stdout``/``stderr`` put back to the
    interpreter's own, before any module's teardown (after the collection before it)."""
    for name in ("stdin", "stdout", "stderr"):
        setattr(sys, name, getattr(sys, f"__{name}__", None))


RESOURCE_TRACKER_GRACE = 5.0
"""Seconds a fork child waits for the resource tracker it started to clean up and exit."""


def _end_resource_tracker() -> None:
    """A fork child that started ``multiprocessing``'s resource tracker (a named
    ``SharedMemory`` or semaphore the job made): the tracker unlinks what the job leaked when
    the job's process ends, which a fresh job's next one, a new process, never races. The
    child closes its end of the tracker's pipe and waits for it to finish before the job is
    reported done. A tracker the template started is not the child's: left alone."""
    module = sys.modules.get("multiprocessing.resource_tracker")
    tracker = getattr(module, "_resource_tracker", None)
    fd, pid = getattr(tracker, "_fd", None), getattr(tracker, "_pid", None)
    if fd is None or pid is None:
        return
    try:
        if os.waitpid(pid, os.WNOHANG) != (0, 0):
            return  # it has ended already
    except ChildProcessError:
        return  # the template's tracker, shared with its other jobs
    try:
        os.close(fd)
    except OSError:
        return
    tracker._fd = None  # type: ignore[union-attr]
    deadline = time.monotonic() + RESOURCE_TRACKER_GRACE
    while time.monotonic() < deadline:
        try:
            if os.waitpid(pid, os.WNOHANG) != (0, 0):
                tracker._pid = None  # type: ignore[union-attr]
                return
        except ChildProcessError:
            return
        time.sleep(0.001)


def _finalizing() -> bool:
    """``sys.is_finalizing`` while a forked job's modules are torn down."""
    return True


def _import_at_shutdown(*_: Any, **__: Any) -> Any:
    """``__import__`` while a forked job's modules are torn down: a fresh interpreter's
    import fails there (its ``sys.modules`` emptied, its ``sys.meta_path`` None)."""
    raise ImportError("sys.meta_path is None, Python is likely shutting down")


def _drop_signal_handlers() -> None:
    """``_PySignal_Fini``: each signal whose handler is a Python function back to the
    default action, the function released."""
    for signum in _signal.valid_signals():
        try:
            handler = _signal.getsignal(signum)
        except (OSError, ValueError):
            continue
        if callable(handler) and handler is not _signal.default_int_handler:
            try:
                _signal.signal(signum, _signal.SIG_DFL)
            except (OSError, ValueError, RuntimeError):
                pass


def clear_modules(modules: Sequence[types.ModuleType]) -> None:
    """The interpreter's last step for modules still alive after the collection
    (``finalize_modules_clear_weaklist``): each module's globals cleared, the newest module
    first, as ``_PyModule_ClearDict`` does (names with one leading underscore set to None, then
    every other name but ``__builtins__``), so that objects only a module held are finalised
    (a temporary file a helper module cached is deleted)."""
    for module in reversed(modules):
        try:
            namespace = vars(module)
        except TypeError:
            continue
        for private in (True, False):
            for key in list(namespace):
                if not isinstance(key, str) or key == "__builtins__":
                    continue
                if private and not (key.startswith("_") and not key.startswith("__")):
                    continue
                try:
                    namespace[key] = None
                except Exception:  # noqa: BLE001 - a finaliser that raises: as at exit, go on
                    pass


def _flush_std_files() -> bool:
    """CPython's ``flush_std_files`` after the ``atexit`` handlers: ``sys.stdout`` flushed (a
    failure reported as unraisable, to ``sys.stderr``), then ``sys.stderr`` (a failure
    silent); either failure makes the process exit with status 120. Returns whether one
    failed."""
    failed = False
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name, None)
        if stream is None or _is_closed(stream):
            continue
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - what the interpreter catches there
            failed = True
            if name == "stdout":
                _write_unraisable(sys.exc_info(), stream)
    return failed


def _is_closed(stream: Any) -> bool:
    try:
        return bool(stream.closed)
    except Exception:  # noqa: BLE001 - as CPython's file_is_closed: an unreadable flag is "open"
        return False


def _write_unraisable(info: Any, obj: Any) -> None:
    """``PyErr_WriteUnraisable(obj)``: the script's own ``sys.unraisablehook`` if it set one
    (with the same attributes; its C argument type cannot be made from Python), else the
    default hook's text on ``sys.stderr``."""
    etype, value, tb = info
    tb = tb.tb_next if tb is not None else None  # from the stream's frames on, not this module's
    hook = sys.unraisablehook
    if hook is not sys.__unraisablehook__:
        args = types.SimpleNamespace(
            exc_type=etype, exc_value=value, exc_traceback=tb, err_msg=None, object=obj
        )
        try:
            hook(args)
            return
        except Exception:  # noqa: BLE001 - a broken hook: the default text instead
            pass
    try:
        text = f"Exception ignored in: {obj!r}\n"
    except Exception:  # noqa: BLE001
        text = "Exception ignored in: <object repr() failed>\n"
    text += "".join(traceback.format_exception(etype, value, tb))
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except Exception:  # noqa: BLE001 - nowhere to write it: as the interpreter, go on
        pass


def _cancel_watchdog() -> None:
    """A ``faulthandler.dump_traceback_later`` timer the script armed: its thread ends with a
    fresh process; left armed in a worker it would dump (and with ``exit=True`` kill) later."""
    faulthandler = sys.modules.get("faulthandler")
    if faulthandler is not None:
        _call(faulthandler.cancel_dump_traceback_later)


def _held_by_threads(threads: list[threading.Thread]) -> set[int]:
    """The files (ids, with their buffer and raw layers) that threads still running at the
    exit (daemon threads) hold in their frames' local variables or in the globals of the
    code they run (a progress thread defined in the script keeps the script's globals): a
    fresh interpreter never frees a daemon thread's frames, so it never flushes or closes
    those files (what they buffer is lost)."""
    if not threads:
        return set()
    frames = sys._current_frames()
    held: set[int] = set()
    for thread in threads:
        frame = frames.get(thread.ident) if thread.ident is not None else None
        while frame is not None:
            for value in [*frame.f_locals.values(), *frame.f_globals.values()]:
                if issubclass(type(value), io.IOBase):
                    held.update(map(id, _layers(value)))
            frame = frame.f_back
    return held


def _layers(stream: Any) -> list[Any]:
    """A file object and the layers below it (a text file's buffer, a buffer's raw file)."""
    found: list[Any] = []
    while stream is not None and not any(stream is layer for layer in found):
        found.append(stream)
        stream = getattr(stream, "buffer", None) or getattr(stream, "raw", None)
    return found


def _std_layers(*streams: Any) -> list[Any]:
    return [layer for stream in streams for layer in _layers(stream)]


def flush_template_files(own: AbstractSet[tuple[int, int, int]]) -> list[Callable[[], Any]]:
    """In the worker, after a template's build: the writable files it left open (not the
    worker's own, ``own``: descriptor, device, inode), flushed now, so that what a forked job
    flushes of them at its end is its own writes; weak references to them."""
    found: list[Callable[[], Any]] = []
    for ref, obj in _build_files(own):
        try:
            if obj.closed or not obj.writable():
                continue
            obj.flush()
            found.append(ref)
        except Exception:  # noqa: BLE001 - not a file of its own (a socket's, a closed one)
            continue
    return found


FilePosition = tuple[Callable[[], Any], bool, Optional[int]]
"""A file object the template's build left: a weak reference, whether it was closed, and its
position (None where it cannot tell)."""


def template_file_positions(own: AbstractSet[tuple[int, int, int]]) -> list[FilePosition]:
    """In the worker, after a template's build: every file object it left (readable ones
    too; not the worker's own, ``own``) and every memory map, with whether it is closed and
    its position, for :func:`moved_template_files`."""
    found = [(ref, bool(obj.closed), _tell(obj)) for ref, obj in _build_files(own)]
    # A memory map keeps a position of its own (find, seek and readline move it).
    maps = [o for o in gc.get_objects() if type(o) is mmap.mmap]
    return found + [(weakref.ref(m), bool(m.closed), _tell(m)) for m in maps]


def moved_template_files(positions: list[FilePosition]) -> list[str]:
    """Of ``positions``, the file objects a job closed, dropped or moved (read from or wrote
    through): direct mode's next job would go on from there, where a fresh job's build
    opens its own."""
    moved = []
    for ref, closed, position in positions:
        obj = ref()
        name = repr(getattr(obj, "name", "?"))
        if obj is None:
            moved.append("a file object the template left is gone")
        elif bool(obj.closed) != closed:
            moved.append(f"a file the template keeps open was closed ({name})")
        elif not closed and _tell(obj) != position:
            moved.append(f"the position of a file the template keeps open moved ({name})")
    return moved


def _tell(obj: Any) -> Optional[int]:
    try:
        return None if obj.closed else int(obj.tell())
    except Exception:  # noqa: BLE001 - not seekable, or a text file iterated with next()
        return None


def _build_files(own: AbstractSet[tuple[int, int, int]]) -> list[tuple[Callable[[], Any], Any]]:
    """The file objects alive now but the standard streams and the worker's own files."""
    streams = _std_layers(sys.stdout, sys.stderr, sys.stdin, sys.__stdout__, sys.__stderr__)
    found = []
    for ref in _open_files():
        obj = ref()
        if obj is None or any(obj is s for s in streams):
            continue
        try:
            if not obj.closed:
                fd = obj.fileno()
                st = os.fstat(fd)
                if (fd, st.st_dev, st.st_ino) in own:
                    continue
        except Exception:  # noqa: BLE001 - no descriptor of its own (an in-memory file)
            continue
        found.append((ref, obj))
    return found


def _open_files(held: AbstractSet[int] = frozenset()) -> list[Callable[[], Any]]:
    """Weak references to the file objects alive now (text layers first), but those ``held``
    by a running thread's frames (:func:`_held_by_threads`). Objects made before the
    invocation are frozen (``gc.freeze``), so only the invocation's own are looked at."""
    # type(), not isinstance(): isinstance asks a proxy for its __class__, which evaluates a
    # lazy object (a LazyLoader module, a SimpleLazyObject) a fresh exit never touches.
    from . import _audit

    with _audit.paused():  # the worker's own walk: not the job's (its watch notes the job's)
        objects = gc.get_objects()
    files = [o for o in objects if issubclass(type(o), io.IOBase) and id(o) not in held]
    del objects
    files.sort(key=_layer)
    return [weakref.ref(o) for o in files]  # io.IOBase's subclasses all take weak references


def _finish_files(files: list[Callable[[], Any]], close: bool) -> None:
    """``files`` (:func:`_open_files`) still alive and open, held by the template's state or a
    library's cache: a fresh interpreter's teardown finalises every object, and so closes
    them. ``close``: a fork child closes them; direct mode only flushes them (the next job may
    still hold them through the state). Text layers first, so that what they buffer reaches
    the file before the layers below are closed; the standard streams (the script's own, if
    it replaced them) and their layers only flushed."""
    if not files:
        return
    streams = set(map(id, _std_layers(sys.stdout, sys.stderr, sys.stdin)))
    for ref in files:
        obj = ref()
        if obj is None:
            continue
        try:
            if obj.closed:
                continue
            if close and id(obj) not in streams:
                obj.close()
            elif obj.writable():
                obj.flush()
        except Exception:  # noqa: BLE001 - as at exit: a failing file is not the job's end
            pass


def _layer(obj: io.IOBase) -> int:
    if isinstance(obj, io.TextIOBase):
        return 0
    return 1 if isinstance(obj, io.BufferedIOBase) else 2


def _call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
    try:
        fn(*args, **kwargs)
    except BaseException:  # noqa: BLE001 - as the interpreter: print and go on
        print("Exception ignored in atexit callback", fn, file=sys.stderr)
        traceback.print_exc()


def _shutdown_threads() -> list[threading.Thread]:
    """A fork child: ``threading._shutdown`` itself, as a fresh interpreter runs it first at
    exit: every callback registered with ``threading._register_atexit`` (``concurrent.futures``'
    and loky's, which tell their executors' threads that the interpreter exits), the main
    thread marked as ended (``main_thread().is_alive()`` is False from here on, which threads
    that wait for it see), then every non-daemon thread joined, also those started meanwhile.
    The child exits after: nothing needs them again. (Direct mode cannot: it would mark the
    worker's main thread and its libraries as shut down for good; :func:`_join_threads`.)
    Returns the threads still running (daemon threads)."""
    shutdown = getattr(threading, "_shutdown", None)
    if shutdown is not None:
        try:
            shutdown()
        except Exception:  # noqa: BLE001 - as the interpreter: print and go on
            traceback.print_exc()
    me = threading.current_thread()
    return [t for t in threading.enumerate() if t is not me and t.is_alive()]


def _join_threads(scope: ExitScope) -> list[threading.Thread]:
    """``threading._shutdown`` for the invocation's threads: wake its ``concurrent.futures``
    pools, then join every non-daemon thread it started."""
    new = [t for t in threading.enumerate() if t not in scope.threads and t.is_alive()]
    me = threading.current_thread()
    new = [t for t in new if t is not me]
    pool_threads = _wake_thread_pools(new)
    _shut_process_pools(new)
    for t in new:
        if not t.daemon:
            t.join(THREAD_POOL_GRACE if t in pool_threads else None)
    return [t for t in new if t.is_alive()]


def _wake_thread_pools(threads: list[threading.Thread]) -> set[threading.Thread]:
    pools = _futures("thread")
    queues = getattr(pools, "_threads_queues", None)
    found: set[threading.Thread] = set()
    if not queues:
        return found
    for t in threads:
        q = queues.get(t)
        if q is not None:
            found.add(t)
            try:
                q.put(None)
            except Exception:  # noqa: BLE001
                pass
    return found


PROCESS_POOL_MODULES = (
    "concurrent.futures.process",
    "joblib.externals.loky.process_executor",
    "loky.process_executor",
)
"""Modules whose process pools a fresh interpreter's exit shuts down (loky, joblib's default
backend, is a fork of ``concurrent.futures.process`` with the same exit machinery)."""


def _shut_process_pools(threads: list[threading.Thread]) -> None:
    """A process pool the script never shut down (``ProcessPoolExecutor``, joblib's loky
    executor): its manager thread ends (after the queued work) once told the interpreter is
    exiting, as the module's ``_python_exit`` tells it."""
    for name in PROCESS_POOL_MODULES:
        pools: Any = sys.modules.get(name)
        wakeups = getattr(pools, "_threads_wakeups", None)
        if not wakeups:
            continue
        mine = [(t, w) for t, w in list(wakeups.items()) if t in threads]
        if not mine:
            continue
        before = pools._global_shutdown
        pools._global_shutdown = True
        try:
            for _, wakeup in mine:
                try:  # loky keeps (shutdown lock, wakeup)
                    (wakeup[-1] if isinstance(wakeup, tuple) else wakeup).wakeup()
                except Exception:  # noqa: BLE001
                    pass
            for t, _ in mine:
                t.join()
        finally:
            pools._global_shutdown = before


def _run_finalize_objects(scope: ExitScope) -> None:
    """``weakref.finalize._exitfunc`` for the invocation's finalize objects: newest first,
    with the collector off, and those made meanwhile (by a finalizer) too. After it, in a fork
    child, no finalizer runs (``finalize._shutdown``, set by :func:`fresh_exit`): those whose
    objects die in the teardown, and those made after this pass (by an ``atexit`` handler, when
    weakref's exit function ran before it, or by ``__del__``), never run, as at a fresh exit,
    where weakref's registry dies in the same collection."""
    finalize: Any = weakref.finalize
    reenable = gc.isenabled()
    if reenable:
        gc.disable()
    try:
        pending: Optional[list[Any]] = None
        while True:
            if pending is None or finalize._dirty:
                pending = _pending_finalizers(scope)
                finalize._dirty = False
            if not pending:
                break
            f = pending.pop()
            try:
                f()
            except Exception:  # noqa: BLE001
                sys.excepthook(*sys.exc_info())  # type: ignore[arg-type]
    finally:
        if reenable:
            gc.enable()


def _pending_finalizers(scope: ExitScope) -> list[Any]:
    """The invocation's finalize objects marked ``atexit``, oldest first."""
    registry = weakref.finalize._registry  # type: ignore[attr-defined]
    try:
        pending = []
        for f in reversed(registry):  # newest first, down to the first one that is older
            info = registry[f]
            if info.index <= scope.finalize_after:
                break
            if info.atexit:
                pending.append(f)
        pending.reverse()
        return pending
    except RuntimeError:  # the registry changed while read (a thread the script left running)
        entries = sorted(list(registry.items()), key=lambda entry: entry[1].index)
        return [f for f, i in entries if i.index > scope.finalize_after and i.atexit]


def _multiprocessing_exit(scope: ExitScope) -> None:
    """``multiprocessing.util._exit_function`` for the invocation's finalizers and children."""
    util, process = _mp_util(), _mp_process()
    if util is None or process is None:
        return
    _run_mp_finalizers(scope, 0)
    children = [p for p in process.active_children() if id(p) not in scope.mp_children]
    for p in children:
        if p.daemon:
            try:
                p._popen.terminate()
            except Exception:  # noqa: BLE001
                pass
    for p in children:
        try:
            p.join()
        except Exception:  # noqa: BLE001
            pass
    _run_mp_finalizers(scope, None)


def _run_mp_finalizers(scope: ExitScope, minpriority: Optional[int]) -> None:
    registry = _mp_util()._finalizer_registry
    keys = [
        k
        for k in list(registry)
        if k not in scope.mp_finalizers
        and k[0] is not None
        and (minpriority is None or k[0] >= minpriority)
    ]
    for key in sorted(keys, reverse=True):
        finalizer = registry.get(key)
        if finalizer is not None:
            try:
                finalizer()
            except Exception:  # noqa: BLE001
                traceback.print_exc()


def _close_handlers(scope: ExitScope) -> None:
    """``logging.shutdown`` for the handlers the invocation created (newest first)."""
    refs = list(logging._handlerList)  # type: ignore[attr-defined]
    # A fork child's scope holds none: every handler is the job's (no id(): a job's audit
    # hook would see each call).
    added = [r() for r in refs if not scope.handlers or id(r) not in scope.handlers]
    for h in reversed(added):
        if h is None:
            continue
        try:
            h.acquire()
            try:
                h.flush()
                h.close()
            finally:
                h.release()
        except (OSError, ValueError):
            pass
