"""How one invocation runs in a warm worker so that it sees what a fresh ``script:`` run sees.

Two modes, chosen per template (``@template("x", isolation="fork")``):

``direct`` (the default)
    The script runs in the worker's main thread. Before it, :class:`ProcessSnapshot` records
    everything a script can change in the interpreter; after it (success or not), the snapshot
    is put back: modules imported by the invocation from outside the installed libraries (so
    each script resolves its own ``utils.py``), ``os.environ``, cwd, umask, ``sys.path`` /
    ``argv`` / ``meta_path`` / hooks / recursion limit, ``sys.stdin``/``stdout``/``stderr``
    and file descriptors 0-2, ``__main__``, logging (handlers, levels, loggers created),
    ``warnings`` filters and once-registries, signal handlers and interval timers, the locale,
    ``random``/``numpy.random`` global seeds (reseeded from the OS, as a fresh process is),
    ``snakemake.shell`` settings. ``atexit`` handlers the script registers run when it ends,
    non-daemon threads it started are joined, as at a fresh interpreter's exit. What cannot
    be undone is detected and reported once per job (:attr:`Outcome.warnings`): a function or
    class of an already loaded module rebound by the script (it is put back), daemon threads
    still running.

``fork``
    The warm worker forks; the child runs the script exactly as above and exits, so nothing
    the script does reaches the worker or a later invocation. Not for states that cannot be
    forked (CUDA contexts, open network clients shared with the parent).

This module only runs scripts; the worker owns the connection, heartbeats and process handling.
"""

import _signal
import ast
import atexit
import builtins
import gc
import importlib
import locale
import logging
import os
import pickle
import random
import resource
import signal
import sys
import threading
import time
import traceback
import types
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Optional

from . import _audit
from ._snakemake_compat import loaded_shell, pip_deployments_path

ISOLATION_MODES = ("direct", "fork")

_TIMERS = tuple(
    getattr(signal, name)
    for name in ("ITIMER_REAL", "ITIMER_VIRTUAL", "ITIMER_PROF")
    if hasattr(signal, name)
)
_SIGNALS = tuple(s for s in signal.valid_signals() if s not in (signal.SIGKILL, signal.SIGSTOP))
_SYS_LISTS = ("path", "meta_path", "path_hooks", "argv")
_SYS_VALUES = (
    "stdin", "stdout", "stderr", "__stdin__", "__stdout__", "__stderr__", "excepthook",
    "displayhook", "breakpointhook", "unraisablehook", "dont_write_bytecode", "ps1", "ps2",
)  # fmt: skip
_THREAD_JOIN_GRACE = 2.0


@dataclass
class Script:
    """One script run: what ``script:``'s preamble would give the script, and its code."""

    code: Any
    script_path: str
    scriptdir: Optional[str]
    snakemake: Any
    workdir: str
    repeats: int = 1
    imports: frozenset[str] = frozenset()
    """Names of the modules the script's source imports (for patch detection)."""
    searchpaths: Optional[list[str]] = None
    """What the preamble appends to ``sys.path``; None: worked out here (tests, old managers)."""


@dataclass
class Outcome:
    """What one invocation produced, in either mode."""

    ok: bool
    error: Optional[str] = None
    seconds: list[float] = field(default_factory=list)
    cpu_seconds: list[float] = field(default_factory=list)
    max_rss_mb: Optional[float] = None
    warnings: list[str] = field(default_factory=list)
    undeclared_writes: list[str] = field(default_factory=list)
    """Paths the script changed outside its outputs and logs (see :mod:`._audit`)."""


def imported_modules(source: str) -> frozenset[str]:
    """The module names a script's source imports (``import a.b``, ``from a import b``)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return frozenset()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return frozenset(names)


_THREAD_VARIABLES = (
    "OMP_NUM_THREADS", "GOTO_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS",
)  # fmt: skip
_TMPDIR_VARIABLES = ("TMPDIR", "TMP", "TEMPDIR", "TEMP")


def job_environment(snakemake: Any) -> dict[str, str]:
    """What Snakemake adds to a ``script:`` job's environment (``snakemake.shell`` runs the
    script's interpreter with them): the job's threads for the linear-algebra libraries, and
    its ``tmpdir`` resource."""
    env: dict[str, str] = {}
    threads = getattr(snakemake, "threads", None)
    if threads is not None:
        env.update(dict.fromkeys(_THREAD_VARIABLES, str(threads)))
    resources: Any = getattr(snakemake, "resources", None)
    tmpdir = resources.get("tmpdir") if hasattr(resources, "get") else None
    if tmpdir:
        env.update(dict.fromkeys(_TMPDIR_VARIABLES, str(tmpdir)))
    return env


def exit_status(code: Any) -> tuple[int, Optional[str]]:
    """``SystemExit(code)`` as the interpreter turns it into an exit status (and a message it
    prints to stderr)."""
    if code is None:
        return 0, None
    if isinstance(code, int):
        return int(code), None
    return 1, str(code)


def _under(path: Optional[str], roots: tuple[str, ...]) -> bool:
    if not path:
        return False
    folder = os.path.dirname(os.path.abspath(path))
    return any(folder == r or folder.startswith(r + os.sep) for r in roots)


def module_is_library(module: Any, roots: tuple[str, ...]) -> bool:
    """True for a module a fresh process would import from the same file whatever the script's
    folder: built in, or loaded from an installed-library folder (``roots``)."""
    spec = getattr(module, "__spec__", None)
    origin = getattr(spec, "origin", None) if spec is not None else None
    if origin in ("built-in", "frozen") or (
        origin is None
        and spec is not None
        and not getattr(spec, "submodule_search_locations", None)
    ):
        return True
    path = getattr(module, "__file__", None) or origin
    if path:
        return _under(path, roots)
    locations = list(getattr(module, "__path__", []) or [])
    return bool(locations) and all(_under(os.path.join(p, "x"), roots) for p in locations)


class Isolation:
    """Runs invocations of one worker in direct or fork mode. Created once, before any template
    is loaded, so that it knows the interpreter's pristine import path."""

    def __init__(self) -> None:
        cwd = os.getcwd()
        # A fresh `python script.py` starts with the interpreter's path (not this worker's cwd);
        # importing snakemake (the preamble does) appends its pip-deployments folder at the end.
        self.pip_deployments = pip_deployments_path()
        self.base_path = [
            p for p in sys.path if p and os.path.abspath(p) != cwd and p != self.pip_deployments
        ]
        roots = {os.path.abspath(p) for p in self.base_path}
        self.library_roots = tuple(sorted(r for r in roots if os.path.isdir(r)))

    def invocation_path(self, script: "Script") -> list[str]:
        """``sys.path`` as a fresh ``script:`` process has it once the preamble ran."""
        searchpaths = script.searchpaths
        if searchpaths is None:
            from ._snakemake_compat import get_snakemake_searchpaths

            searchpaths = [*get_snakemake_searchpaths(), *filter(None, [script.scriptdir])]
        path = [os.path.join(script.workdir, ".snakemake", "scripts"), *self.base_path]
        path += searchpaths
        if self.pip_deployments:
            path.append(self.pip_deployments)
        return path

    # ---- the two modes -------------------------------------------------------------------------

    def run(self, script: Script, mode: str = "direct") -> Outcome:
        if mode == "fork" and hasattr(os, "fork"):
            return self.run_forked(script)
        return self.run_direct(script)

    def run_direct(self, script: Script) -> Outcome:
        snapshot = ProcessSnapshot(self, script)
        try:
            outcome = self._execute(script, snapshot)
        finally:
            restore_warnings = snapshot.restore()
        outcome.warnings.extend(restore_warnings)
        return outcome

    def run_forked(self, script: Script) -> Outcome:
        """Run the script in a fork of this warm process; the worker itself is never touched."""
        for stream in (sys.stdout, sys.stderr):
            _flush(stream)
        read_fd, write_fd = os.pipe()
        gc.freeze()  # the child's collections then skip the warm objects: fewer copied pages
        pid = os.fork()
        if pid == 0:  # the child: run, report, and leave without any of the parent's cleanup
            status = 0
            try:
                os.close(read_fd)
                snapshot = ProcessSnapshot(self, script, in_child=True)
                outcome = self._execute(script, snapshot)
                with os.fdopen(write_fd, "wb") as out:
                    pickle.dump(outcome, out)
            except BaseException:  # noqa: BLE001 - nothing may escape a forked child
                traceback.print_exc()
                status = 70
            finally:
                os._exit(status)
        gc.unfreeze()
        os.close(write_fd)
        with os.fdopen(read_fd, "rb") as result:
            data = result.read()
        _, wait_status = os.waitpid(pid, 0)
        if data:
            try:
                return pickle.loads(data)  # noqa: S301 - our own child, through our own pipe
            except Exception:
                pass
        return Outcome(False, _ended_process(wait_status))

    # ---- running the code ------------------------------------------------------------------

    def _execute(self, script: Script, snapshot: "ProcessSnapshot") -> Outcome:
        """Run the script (all its repeats), its writes outside its outputs and logs audited
        (:mod:`._audit`). In fork mode this runs in the child, so the child's writes are the
        ones seen, and they come back with the pickled :class:`Outcome`."""
        _audit.start(os.getcwd(), script.snakemake)
        try:
            outcome = self._execute_unaudited(script, snapshot)
        finally:
            undeclared = _audit.stop()
        outcome.undeclared_writes = undeclared
        return outcome

    def _execute_unaudited(self, script: Script, snapshot: "ProcessSnapshot") -> Outcome:
        seconds: list[float] = []
        cpu: list[float] = []
        try:
            for iteration in range(max(1, script.repeats)):
                if script.repeats > 1:
                    script.snakemake.bench_iteration = iteration
                namespace = snapshot.enter_script()
                wall, proc = time.perf_counter(), time.process_time()
                try:
                    exec(script.code, namespace)
                except SystemExit as e:
                    status, message = exit_status(e.code)
                    if message is not None:  # as the interpreter does, to the script's stderr
                        try:
                            print(message, file=sys.stderr)
                        except (OSError, ValueError, AttributeError):
                            pass
                    if status != 0:
                        raise ScriptExit(status, message) from e
                finally:
                    snapshot.leave_script()
                    if os.getpid() != snapshot.pid:  # a child the script forked ran off its end
                        os._exit(1 if sys.exc_info()[0] not in (None, SystemExit) else 0)
                seconds.append(time.perf_counter() - wall)
                cpu.append(time.process_time() - proc)
        except ScriptExit as e:
            detail = f": {e.message}" if e.message else ""
            return Outcome(False, f"script exited with status {e.status}{detail}")
        except BaseException:  # noqa: BLE001 - KeyboardInterrupt too: the script raised it
            return Outcome(False, script_traceback(script.script_path))
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
        return Outcome(True, None, seconds, cpu, rss_mb)


class ScriptExit(Exception):
    def __init__(self, status: int, message: Optional[str]) -> None:
        super().__init__(status)
        self.status, self.message = status, message


def script_traceback(script_path: str) -> str:
    """The traceback from the user's script down, without this worker's own frames."""
    etype, value, tb = sys.exc_info()
    frames = traceback.extract_tb(tb)
    first = next((i for i, f in enumerate(frames) if f.filename == script_path), 0)
    lines = traceback.format_list(frames[first:]) + traceback.format_exception_only(etype, value)
    text = "Traceback (most recent call last):\n" + "".join(lines)
    if etype is KeyboardInterrupt:
        text += "(KeyboardInterrupt raised by the script; the worker stays up)\n"
    return text


def _ended_process(wait_status: int) -> str:
    if os.WIFSIGNALED(wait_status):
        sig = os.WTERMSIG(wait_status)
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = "unknown"
        return f"the script's forked process was killed by signal {sig} ({name})"
    code = os.WEXITSTATUS(wait_status) if os.WIFEXITED(wait_status) else wait_status
    return f"the script ended its forked process with status {code} (os._exit or a crash)"


def _flush(stream: Any) -> None:
    try:
        if stream is not None and not getattr(stream, "closed", False):
            stream.flush()
    except Exception:
        pass


# ---- the snapshot of one direct invocation ---------------------------------------------------


class ProcessSnapshot:
    """Everything one invocation may change, taken before it and put back after it."""

    def __init__(self, isolation: Isolation, script: Script, in_child: bool = False) -> None:
        self.iso, self.script, self.in_child = isolation, script, in_child
        self.pid = os.getpid()
        self.threads = set(threading.enumerate())
        self.atexit: list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = []
        self.namespace: dict[str, Any] = {}
        self.leftover_threads: list[threading.Thread] = []
        self.logging: Optional[_LoggingState] = None
        self.tempdir: Optional[tuple[Any, Optional[str]]] = None
        if in_child:
            return  # a forked child exits after the script: nothing to put back
        self.cwd = os.getcwd()
        self.umask = os.umask(0o022)
        os.umask(self.umask)
        self.environ = dict(os.environ._data)  # type: ignore[attr-defined]  # bytes: no decoding
        self.modules = dict(sys.modules)
        self.sys_lists = {name: list(getattr(sys, name)) for name in _SYS_LISTS}
        self.sys_values = {name: getattr(sys, name) for name in _SYS_VALUES if hasattr(sys, name)}
        self.recursion_limit = sys.getrecursionlimit()
        self.int_digits = sys.get_int_max_str_digits()
        self.trace, self.profile = sys.gettrace(), sys.getprofile()
        self.switch_interval = sys.getswitchinterval()
        self.fds = {fd: _dup(fd) for fd in (0, 1, 2)}
        self.signals = [_signal.getsignal(sig) for sig in _SIGNALS]
        self.logging = _LoggingState()
        self.warnings = (
            list(warnings.filters),
            warnings.showwarning,
            warnings.formatwarning,
            dict(warnings.onceregistry),  # type: ignore[attr-defined]
            list(sys.warnoptions),
        )
        self.locale = _locale()
        self.shell = _shell_state()
        self.watched = self._watched_modules()
        self.main = sys.modules.get("__main__")

    # ---- around the exec --------------------------------------------------------------------

    def enter_script(self) -> dict[str, Any]:
        """Make the interpreter look like a fresh ``script:`` process and return its globals."""
        script = self.script
        scripts_dir = os.path.join(script.workdir, ".snakemake", "scripts")
        real_file = os.path.join(
            scripts_dir, f"tmp{os.urandom(4).hex()}.{os.path.basename(script.script_path)}"
        )
        sys.path[:] = self.iso.invocation_path(script)
        sys.argv[:] = [real_file]
        os.environ.update(job_environment(script.snakemake))
        tempfile: Any = sys.modules.get("tempfile")
        if tempfile is not None:  # a fresh process has not cached a temporary folder yet
            self.tempdir = (tempfile, tempfile.tempdir)
            tempfile.tempdir = None
        from ._snakemake_compat import IoSnakemake as Snakemake
        from ._snakemake_compat import snakemake_logger as logger

        main = types.ModuleType("__main__")
        namespace = main.__dict__
        namespace.update(
            __file__=script.script_path,
            __real_file__=real_file,
            __builtins__=builtins,
            __cached__=None,
            __annotations__={},
            sys=sys,
            pickle=pickle,
            snakemake=script.snakemake,
            logger=logger,
            Snakemake=Snakemake,
        )
        sys.modules["__main__"] = main
        atexit.register, atexit.unregister = self._atexit_register, self._atexit_unregister  # type: ignore[assignment]
        self.namespace = namespace
        return namespace

    def restore_tempdir(self) -> None:
        if self.tempdir is not None:
            tempfile, value = self.tempdir
            tempfile.tempdir = value

    def leave_script(self) -> None:
        """What a fresh interpreter does when the script ends: join its threads, run its exit
        handlers, flush its streams."""
        atexit.register, atexit.unregister = _ATEXIT_REGISTER, _ATEXIT_UNREGISTER
        self.leftover_threads = self._join_threads()
        for fn, args, kwargs in reversed(self.atexit):
            try:
                fn(*args, **kwargs)
            except BaseException:  # noqa: BLE001 - as the interpreter: print and go on
                print("Exception ignored in atexit callback", fn, file=sys.stderr)
                traceback.print_exc()
        self.atexit.clear()
        if self.logging is not None:
            self.logging.close_added()
        else:
            logging.shutdown()  # a forked child: as at a fresh interpreter's exit
        for stream in (sys.stdout, sys.stderr):
            _flush(stream)

    def _atexit_register(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        caller = sys._getframe(1).f_code.co_filename
        if _under(caller, self.iso.library_roots) and not _under(
            caller, (self.script.scriptdir or "//",)
        ):
            return _ATEXIT_REGISTER(fn, *args, **kwargs)  # a library's handler: process exit
        self.atexit.append((fn, args, kwargs))
        return fn

    def _atexit_unregister(self, fn: Callable[..., Any]) -> None:
        self.atexit[:] = [entry for entry in self.atexit if entry[0] != fn]
        _ATEXIT_UNREGISTER(fn)

    def _join_threads(self) -> list[threading.Thread]:
        new = [t for t in threading.enumerate() if t not in self.threads and t.is_alive()]
        executors = _wake_thread_pools(new)
        for t in new:
            if not t.daemon:
                t.join(_THREAD_JOIN_GRACE if t in executors else None)
        return [t for t in new if t.is_alive()]

    # ---- after ------------------------------------------------------------------------------

    def restore(self) -> list[str]:
        """Put everything back; return what could not be undone (warnings for the job)."""
        notes: list[str] = []
        for stream in (sys.stdout, sys.stderr):
            _flush(stream)
        for name, value in self.sys_values.items():
            setattr(sys, name, value)
        for fd, saved in self.fds.items():
            if saved is not None:
                try:
                    os.dup2(saved, fd)
                finally:
                    os.close(saved)
        for name, saved_list in self.sys_lists.items():
            getattr(sys, name)[:] = saved_list
        if self.main is not None and sys.modules.get("__main__") is not self.main:
            sys.modules["__main__"] = self.main
        notes += self._restore_modules()
        sys.setrecursionlimit(self.recursion_limit)
        sys.set_int_max_str_digits(self.int_digits)
        # Only when changed: a C-level profiler or coverage tracer cannot be set back from Python.
        if sys.gettrace() is not self.trace:
            _try(sys.settrace, self.trace)
        if sys.getprofile() is not self.profile:
            _try(sys.setprofile, self.profile)
        sys.setswitchinterval(self.switch_interval)
        self._restore_environ()
        self.restore_tempdir()
        try:
            os.chdir(self.cwd)
        except OSError:
            pass
        os.umask(self.umask)
        self._restore_signals()
        if self.logging is not None:
            self.logging.restore()
        filters, show, fmt, once, options = self.warnings
        warnings.filters[:] = filters  # type: ignore[index]  # a list at run time
        warnings.showwarning, warnings.formatwarning = show, fmt
        warnings.onceregistry.clear()  # type: ignore[attr-defined]
        warnings.onceregistry.update(once)  # type: ignore[attr-defined]
        sys.warnoptions[:] = options
        warnings._filters_mutated()  # type: ignore[attr-defined]
        _restore_locale(self.locale)
        _restore_shell(self.shell)
        _reseed()
        leftover = self.leftover_threads
        if leftover:
            names = ", ".join(repr(t.name) for t in leftover)
            notes.append(
                f"left thread(s) {names} running in the sticky worker; a fresh process would "
                'have stopped them at exit (use @template(..., isolation="fork"))'
            )
        self.namespace = {}
        return notes

    def _restore_environ(self) -> None:
        data = os.environ._data  # type: ignore[attr-defined]
        if data == self.environ:
            return
        decode = os.fsdecode
        for key in [k for k in data if k not in self.environ]:
            del os.environ[decode(key)]
        for key, value in self.environ.items():
            if data.get(key) != value:
                os.environ[decode(key)] = decode(value)
        if hasattr(time, "tzset"):
            time.tzset()

    def _restore_signals(self) -> None:
        for timer in _TIMERS:
            if signal.getitimer(timer) != (0.0, 0.0):
                signal.setitimer(timer, 0)
        for sig, handler in zip(_SIGNALS, self.signals, strict=True):
            if handler is not None and _signal.getsignal(sig) != handler:
                try:
                    _signal.signal(sig, handler)
                except (OSError, ValueError, TypeError):
                    pass

    # ---- modules ----------------------------------------------------------------------------

    def _watched_modules(self) -> dict[str, tuple[Any, list[tuple[str, Any]]]]:
        """Loaded modules the script names in its imports (and builtins): their attributes now,
        to find the ones the script rebinds."""
        names = {"builtins"}
        for name in self.script.imports:
            parts = name.split(".")
            names.update(".".join(parts[: i + 1]) for i in range(len(parts)))
        watched = {}
        for name in names:
            module = sys.modules.get(name)
            if module is not None and name not in ("sys", "__main__"):
                watched[name] = (module, list(vars(module).items()))
        return watched

    def _restore_modules(self) -> list[str]:
        notes: list[str] = []
        before, roots = self.modules, self.iso.library_roots
        added = sys.modules.keys() - before.keys()
        for name in added:
            module = sys.modules[name]
            if module is None or not module_is_library(module, roots):
                del sys.modules[name]
                parent, _, child = name.rpartition(".")
                owner = sys.modules.get(parent) if parent else None
                if owner is not None and getattr(owner, child, None) is module:
                    try:
                        delattr(owner, child)
                    except AttributeError:
                        pass
        if sys.modules != before:  # compared in C: modules compare by identity
            for name, module in before.items():
                if sys.modules.get(name) is not module:
                    sys.modules[name] = module
        patches: list[str] = []
        for name, (module, items) in sorted(self.watched.items()):
            now = vars(module)
            if list(now.items()) == items:
                continue
            old = dict(items)
            for key, value in list(now.items()):
                if key in old:
                    if old[key] is not value and (_is_code(old[key]) or _is_code(value)):
                        now[key] = old[key]
                        patches.append(f"rebound {name}.{key}")
                elif _is_code(value) and not isinstance(value, types.ModuleType):
                    del now[key]
                    patches.append(f"added {name}.{key}")
            for key, value in old.items():
                if key not in now and _is_code(value):
                    now[key] = value
                    patches.append(f"deleted {name}.{key}")
        if patches:
            notes.append(_patch_note(patches))
        if added:  # what a fresh process would find, not a directory listing cached earlier
            importlib.invalidate_caches()
        return notes


def _patch_note(patches: list[str]) -> str:
    """One line for all the monkeypatches of one job."""
    shown = ", ".join(patches[:5]) + (f" and {len(patches) - 5} more" if len(patches) > 5 else "")
    return (
        f"the script {shown} (monkeypatches of modules loaded before it); put back after the "
        "job, but objects made meanwhile may keep them: use "
        '@template(..., isolation="fork") for scripts that patch libraries'
    )


def _is_code(value: Any) -> bool:
    """Functions, classes, modules and other callables: what a monkeypatch replaces (a rebound
    plain value is usually a library's own lazy cache)."""
    return callable(value) or isinstance(value, types.ModuleType)


def _try(fn: Callable[[Any], Any], value: Any) -> None:
    try:
        fn(value)
    except (TypeError, ValueError):
        pass


def _dup(fd: int) -> Optional[int]:
    try:
        return os.dup(fd)
    except OSError:
        return None


_ATEXIT_REGISTER = atexit.register
_ATEXIT_UNREGISTER = atexit.unregister


def _wake_thread_pools(threads: list[threading.Thread]) -> set[threading.Thread]:
    """Threads of ``concurrent.futures`` pools the script left open: wake them as the
    interpreter's exit does, so they end once their queue is empty."""
    pool = sys.modules.get("concurrent.futures.thread")
    queues = getattr(pool, "_threads_queues", None)
    if not queues:
        return set()
    found = set()
    for t in threads:
        q = queues.get(t)
        if q is not None:
            found.add(t)
            try:
                q.put(None)
            except Exception:
                pass
    return found


def _locale() -> Optional[str]:
    try:
        return locale.setlocale(locale.LC_ALL)
    except locale.Error:
        return None


def _restore_locale(saved: Optional[str]) -> None:
    if saved is not None and _locale() != saved:
        try:
            locale.setlocale(locale.LC_ALL, saved)
        except locale.Error:
            pass


def _shell_state() -> Optional[tuple[Any, ...]]:
    shell = loaded_shell()
    if shell is None:
        return None
    return (
        shell,
        dict(shell._process_args),
        shell._process_prefix,
        shell._process_suffix,
        getattr(shell, "_win_command_prefix", None),
    )


def _restore_shell(saved: Optional[tuple[Any, ...]]) -> None:
    if saved is None:
        return
    shell, args, prefix, suffix, win = saved
    shell._process_args.clear()
    shell._process_args.update(args)
    shell._process_prefix, shell._process_suffix = prefix, suffix
    if win is not None:
        shell._win_command_prefix = win


def _reseed() -> None:
    """A fresh process seeds the global generators from the OS: so does every invocation."""
    random.seed()
    np_random = sys.modules.get("numpy.random")
    if np_random is not None:
        try:
            np_random.seed()
        except Exception:
            pass


def _logger_state(lg: logging.Logger) -> tuple[Any, ...]:
    return (lg.level, lg.propagate, lg.disabled, lg.parent, tuple(lg.handlers), tuple(lg.filters))


class _LoggingState:
    """The logging configuration: loggers (levels, handlers, filters, parents), the root, the
    manager's switches and the module's hooks. Cheap when nothing changed: one pass over the
    loggers to compare, the rest compared in C."""

    def __init__(self) -> None:
        manager = logging.Logger.manager
        self.logger_dict = dict(manager.loggerDict)
        self.loggers = [logging.root] + [
            lg for lg in manager.loggerDict.values() if isinstance(lg, logging.Logger)
        ]
        self.states = list(map(_logger_state, self.loggers))
        self.handler_refs = set(map(id, logging._handlerList))  # type: ignore[attr-defined]
        self.module = self._module_state()

    @staticmethod
    def _module_state() -> tuple[Any, ...]:
        manager = logging.Logger.manager
        return (
            manager.disable,
            manager.loggerClass,
            manager.logRecordFactory,
            dict(logging._levelToName),  # type: ignore[attr-defined]
            dict(logging._nameToLevel),  # type: ignore[attr-defined]
            logging.getLoggerClass(),
            logging.getLogRecordFactory(),
            logging.raiseExceptions,
            logging.lastResort,
            logging.logThreads,
            logging.logProcesses,
            logging.logMultiprocessing,
        )

    def close_added(self) -> None:
        """Flush and close every handler created since the snapshot, as ``logging.shutdown``
        does at a fresh interpreter's exit (so the job's log file is complete when it ends)."""
        refs = logging._handlerList  # type: ignore[attr-defined]
        added = [r() for r in refs if id(r) not in self.handler_refs]
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
        self.handler_refs.update(map(id, refs))

    def restore(self) -> None:
        self.close_added()
        manager = logging.Logger.manager
        changed = False
        if manager.loggerDict != self.logger_dict:
            manager.loggerDict.clear()
            manager.loggerDict.update(self.logger_dict)
            changed = True
        if list(map(_logger_state, self.loggers)) != self.states:
            for lg, state in zip(self.loggers, self.states, strict=True):
                level, propagate, disabled, parent, handlers, filters = state
                lg.level, lg.propagate, lg.disabled, lg.parent = level, propagate, disabled, parent
                lg.handlers[:] = handlers
                lg.filters[:] = filters
            changed = True
        if self._module_state() != self.module:
            (disable, mclass, mfactory, to_name, to_level, cls, factory, raise_exc, last,
             threads, processes, mp) = self.module  # fmt: skip
            manager.disable, manager.loggerClass, manager.logRecordFactory = (
                disable, mclass, mfactory,
            )  # fmt: skip
            logging._levelToName.clear()  # type: ignore[attr-defined]
            logging._levelToName.update(to_name)  # type: ignore[attr-defined]
            logging._nameToLevel.clear()  # type: ignore[attr-defined]
            logging._nameToLevel.update(to_level)  # type: ignore[attr-defined]
            logging.setLoggerClass(cls)
            logging.setLogRecordFactory(factory)
            logging.raiseExceptions, logging.lastResort = raise_exc, last
            logging.logThreads, logging.logProcesses = threads, processes
            logging.logMultiprocessing = mp
            changed = True
        if changed:
            manager._clear_cache()  # type: ignore[attr-defined]
