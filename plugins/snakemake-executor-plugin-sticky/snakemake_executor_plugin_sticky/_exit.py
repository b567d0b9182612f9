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

import atexit
import builtins
import functools
import gc
import io
import logging
import sys
import threading
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
        return cls(finalize_after=newest_finalizer())


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


def fresh_exit(
    scope: ExitScope,
    namespace: Optional[dict[str, Any]],
    handlers: Optional[list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]]],
    modules: Sequence[types.ModuleType] = (),
    find_files: bool = True,
) -> ExitResult:
    """Finalise what the invocation started, in the interpreter's order. ``namespace``: the
    script's globals (direct mode), cleared at once; None in a fork child, which finds its
    ``__main__`` in ``sys.modules``. ``handlers``: the ``atexit`` handlers the script
    registered (direct mode), or None to run this process's whole ``atexit`` list (a fork
    child, whose list holds only the invocation's).
    ``modules``: the workflow's own modules the invocation imported, in the order it
    imported them, torn down with ``__main__`` in a fork child (:func:`_finalize_modules`).
    ``find_files``: look for files still open among every live object (:func:`_finish_files`;
    a fork child whose script added an audit hook does not, since the hook would see the
    walk)."""
    if handlers is None:
        leftover = _shutdown_threads()
        atexit._run_exitfuncs()
    else:
        leftover = _join_threads(scope)
        for fn, args, kwargs in reversed(handlers):
            _call(fn, *args, **kwargs)
    _run_finalize_objects(scope)
    _multiprocessing_exit(scope)
    _close_handlers(scope)
    _cancel_watchdog()
    flush_failed = _flush_std_files()
    for name in ("stdin", "stdout", "stderr"):  # as finalize_modules, before any module's teardown
        setattr(sys, name, getattr(sys, f"__{name}__", None))
    held = _held_by_threads(leftover) if find_files else None
    if handlers is None:  # the child's __main__ is found by name (nothing else holds it)
        _finish_files(_finalize_modules(modules, held), close=True)
    else:
        if namespace is not None:
            namespace.clear()
            gc.collect()
        if held is not None:
            _finish_files(_open_files(held), close=False)
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None and not stream.closed:
                stream.flush()
        except Exception:  # noqa: BLE001 - a closed or broken stream: as at exit, go on
            pass
    return ExitResult(leftover, flush_failed)


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
    modules: Sequence[types.ModuleType], held: Optional[AbstractSet[int]]
) -> list[Callable[[], Any]]:
    """A fork child: CPython's ``finalize_modules`` for ``__main__`` and ``modules`` (the
    workflow's own modules the script imported): the modules removed from ``sys.modules``; a
    first collection (below); ``sys``'s special attributes set to None and the builtins as the
    interpreter's initial copy; a garbage collection (an unreferenced module's globals are
    collected as one cycle: each object's ``__del__`` runs while the others are still bound),
    then the globals of modules still alive cleared, newest first (:func:`clear_modules`).
    ``sys`` and the builtins are put back after it, for the child's own last steps. Returns
    the files open after the first collection (:func:`_open_files`, but those in ``held``;
    none when ``held`` is None): looking for them before it would change the order in which
    it finalises a cycle's objects."""
    loaded = sys.modules
    main = loaded.pop("__main__", None)
    doomed = [m for m in [main, *modules] if isinstance(m, types.ModuleType)]
    for module in modules:
        name = getattr(module, "__name__", None)
        if isinstance(name, str) and loaded.get(name) is module:
            del loaded[name]
    # First a collection with the modules still loaded, as the young collections during a
    # fresh run leave it: garbage cycles go (a file in one loses what it buffered: its raw
    # layer, made first, is finalised first), and what survives is ordered as reached from the
    # modules' globals (a file's text layer before its raw layer, so the teardown's
    # collection flushes it before closing it).
    if gc.isenabled():
        gc.collect()
    files = _open_files(held) if held is not None else []
    alive = [weakref.ref(m) for m in doomed]
    del main, doomed
    # Only the import machinery is put back (sys.last_traceback would keep the script's
    # frames, and so its globals, alive through the collection).
    saved_sys = {name: getattr(sys, name) for name in _SYS_RESTORED if hasattr(sys, name)}
    space = vars(builtins)
    saved_builtins = {name: space.pop(name) for name in LATE_BUILTINS if name in space}
    if "_" in space:
        space["_"] = None
    try:
        for name in _SYS_DELETES:
            if hasattr(sys, name):
                setattr(sys, name, None)
        gc.collect()
        clear_modules([m for m in (ref() for ref in alive) if m is not None])
    finally:
        for name, value in saved_sys.items():
            setattr(sys, name, value)
        space.update(saved_builtins)
    return files


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
    exit (daemon threads) hold in the local variables of their frames: a fresh interpreter
    never frees a daemon thread's frames, so it never flushes or closes those files (what they
    buffer is lost)."""
    if not threads:
        return set()
    frames = sys._current_frames()
    held: set[int] = set()
    for thread in threads:
        frame = frames.get(thread.ident) if thread.ident is not None else None
        while frame is not None:
            for value in list(frame.f_locals.values()):
                layer: Any = value if issubclass(type(value), io.IOBase) else None
                while layer is not None and id(layer) not in held:
                    held.add(id(layer))
                    layer = getattr(layer, "buffer", None) or getattr(layer, "raw", None)
            frame = frame.f_back
    return held


def _open_files(held: AbstractSet[int] = frozenset()) -> list[Callable[[], Any]]:
    """Weak references to the file objects alive now (text layers first), but those ``held``
    by a running thread's frames (:func:`_held_by_threads`). Objects made before the
    invocation are frozen (``gc.freeze``), so only the invocation's own are looked at."""
    # type(), not isinstance(): isinstance asks a proxy for its __class__, which evaluates a
    # lazy object (a LazyLoader module, a SimpleLazyObject) a fresh exit never touches.
    files = [o for o in gc.get_objects() if issubclass(type(o), io.IOBase) and id(o) not in held]
    files.sort(key=_layer)
    refs: list[Callable[[], Any]] = []
    for obj in files:
        try:
            refs.append(weakref.ref(obj))
        except TypeError:  # a subclass without weak references: held until the end
            refs.append(functools.partial(_same_object, obj))
    return refs


def _same_object(obj: Any) -> Any:
    return obj


def _finish_files(files: list[Callable[[], Any]], close: bool) -> None:
    """``files`` (:func:`_open_files`) still alive and open, held by the template's state or a
    library's cache: a fresh interpreter's teardown finalises every object, and so closes
    them. ``close``: a fork child closes them; direct mode only flushes them (the next job may
    still hold them through the state). Text layers first, so that what they buffer reaches
    the file before the layers below are closed; the standard streams (the script's own, if
    it replaced them) and their layers only flushed."""
    streams: set[int] = set()
    for stream in (sys.stdout, sys.stderr, sys.stdin):
        layer: Any = stream
        while layer is not None and id(layer) not in streams:
            streams.add(id(layer))
            layer = getattr(layer, "buffer", None) or getattr(layer, "raw", None)
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
    """``weakref.finalize._exitfunc`` for the invocation's finalize objects, newest first."""
    registry = weakref.finalize._registry  # type: ignore[attr-defined]
    try:
        pending = []
        for f in reversed(registry):  # newest first, down to the first one that is older
            info = registry[f]
            if info.index <= scope.finalize_after:
                break
            if info.atexit:
                pending.append(f)
    except RuntimeError:  # the registry changed while read (a thread the script left running)
        entries = sorted(list(registry.items()), key=lambda entry: entry[1].index, reverse=True)
        pending = [f for f, i in entries if i.index > scope.finalize_after and i.atexit]
    for f in pending:
        try:
            f()
        except Exception:  # noqa: BLE001
            sys.excepthook(*sys.exc_info())  # type: ignore[arg-type]


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
    refs = logging._handlerList  # type: ignore[attr-defined]
    added = [r() for r in list(refs) if id(r) not in scope.handlers]
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
