"""Process-global state of libraries, read through their documented getters (the sticky
executor's direct mode and NBRewind's kernels both compare it around user code).

Direct mode (an invocation runs in the worker itself) compares a fingerprint of the process
before and after every invocation (:mod:`._fingerprint`); module globals are compared there by
identity, but much library state lives where no module global changes: C-level settings
(``decimal.getcontext()``, ``socket.getdefaulttimeout()``, ``gc.isenabled()``), context
variables (numpy's print options), option registries (pandas, matplotlib's ``rcParams``).
Each reader below returns such state of one library, as a dict of label -> value, through the
library's documented public getters. A reader runs only for a module already in
``sys.modules`` (it never imports anything) and must not change the state it reads.

Where a library has no public getter for a state that its public API changes, the reader uses
the attribute that API writes (``logging``'s loggers, ``webbrowser``'s registry, ``asyncio``'s
current loop: its getter would create a loop) or, with no such attribute, the state's effect
(``scipy.fft``'s global backend, flush-to-zero mode). Values compare with ``==`` and show
readably: functions and other objects by identity (:class:`Same`), mutable containers copied
into tuples and dicts.

The list is the library matrix's (``tests/integration/snakemake_executor_plugin_sticky/
library_matrix.py``): every state a matrix case changes has a reader here, and a test checks
that each case's change shows in :func:`read_registries`.
"""

import sys
from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

Reader = Callable[[ModuleType], dict[str, Any]]


class Same:
    """An object compared by identity (a function, a handler, a loop), shown by its type and
    name; holding it keeps its id from being reused."""

    __slots__ = ("obj",)

    def __init__(self, obj: object) -> None:
        self.obj = obj

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Same) and other.obj is self.obj

    def __hash__(self) -> int:
        return id(self.obj)

    def __repr__(self) -> str:
        name = getattr(self.obj, "__qualname__", None)
        kind = type(self.obj).__qualname__
        return f"<{kind} {name}>" if isinstance(name, str) else f"<{kind}>"


def _same(obj: object) -> object:
    return None if obj is None else Same(obj)


def _plain(value: Any) -> Any:
    """value as plain data: scalars as they are, containers as tuples and dicts, anything else
    by identity."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return value
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return tuple(_plain(v) for v in value)
    if isinstance(value, (set, frozenset)):
        return frozenset(_plain(v) for v in value)
    return Same(value)


def _idents(objects: Iterable[object]) -> tuple[object, ...]:
    return tuple(_same(o) for o in objects)


_DENORMAL = 5e-324


# ---- standard library ---------------------------------------------------------------------


def _abc(m: ModuleType) -> dict[str, Any]:
    # Changes with every ABCMeta.register() of any ABC.
    return {"cache_token": m.get_cache_token()}


def _asyncio(m: ModuleType) -> dict[str, Any]:
    # get_event_loop_policy() and get_event_loop() would create what they return.
    policy = m.events._event_loop_policy
    local = getattr(policy, "_local", None)
    loop = getattr(local, "_loop", None)
    return {
        "policy": _same(policy),
        "event loop": _same(loop),
        "event loop closed": loop is not None and loop.is_closed(),
        "event loop set": getattr(local, "_set_called", None),
    }


def _atexit(m: ModuleType) -> dict[str, Any]:
    return {"callbacks": m._ncallbacks()}


def _calendar(m: ModuleType) -> dict[str, Any]:
    return {"firstweekday": m.firstweekday()}


def _copyreg(m: ModuleType) -> dict[str, Any]:
    return {
        "dispatch_table": tuple((k, Same(v)) for k, v in list(m.dispatch_table.items())),
        "extensions": dict(m._extension_registry),
    }


def _csv(m: ModuleType) -> dict[str, Any]:
    dialects = []
    for name in sorted(m.list_dialects()):
        d = m.get_dialect(name)
        attributes = (d.delimiter, d.quotechar, d.escapechar, d.doublequote)
        dialects.append((name, *attributes, d.skipinitialspace, d.lineterminator, d.quoting))
    return {"field_size_limit": m.field_size_limit(), "dialects": tuple(dialects)}


def _ctypes(m: ModuleType) -> dict[str, Any]:
    return {"errno": m.get_errno()}


def _curses(m: ModuleType) -> dict[str, Any]:
    try:
        clear = m.tigetstr("clear")
    except m.error:
        clear = "setupterm() not called"
    return {"terminal clear": clear}


def _decimal(m: ModuleType) -> dict[str, Any]:
    return {
        "context": repr(m.getcontext()),
        "DefaultContext": repr(m.DefaultContext),
        "BasicContext": repr(m.BasicContext),
        "ExtendedContext": repr(m.ExtendedContext),
    }


def _doctest(m: ModuleType) -> dict[str, Any]:
    return {"option flags": tuple(m.OPTIONFLAGS_BY_NAME.items())}


def _email_charset(m: ModuleType) -> dict[str, Any]:
    return {
        "CHARSETS": tuple(m.CHARSETS.items()),
        "ALIASES": tuple(m.ALIASES.items()),
        "CODEC_MAP": tuple(m.CODEC_MAP.items()),
    }


def _faulthandler(m: ModuleType) -> dict[str, Any]:
    return {"enabled": m.is_enabled()}


def _filecmp(m: ModuleType) -> dict[str, Any]:
    return {"DEFAULT_IGNORES": tuple(m.DEFAULT_IGNORES)}


def _gc(m: ModuleType) -> dict[str, Any]:
    return {
        "isenabled": m.isenabled(),
        "threshold": m.get_threshold(),
        "debug": m.get_debug(),
        # A callback a job appended (memory profiling) fires in every later job's collections,
        # into its stderr, after the job's globals are gone.
        "callbacks": _idents(m.callbacks),
        # Not gc.get_freeze_count(): it walks every frozen object (20 ms in a torch worker,
        # after every invocation), and the worker freezes the template's objects itself.
    }


def _gettext(m: ModuleType) -> dict[str, Any]:
    return {"text domain directories": dict(m._localedirs)}


def _imghdr(m: ModuleType) -> dict[str, Any]:
    return {"tests": _idents(m.tests)}


def _importlib_machinery(m: ModuleType) -> dict[str, Any]:
    return {
        "SOURCE_SUFFIXES": tuple(m.SOURCE_SUFFIXES),
        "BYTECODE_SUFFIXES": tuple(m.BYTECODE_SUFFIXES),
        "EXTENSION_SUFFIXES": tuple(m.EXTENSION_SUFFIXES),
    }


def _linecache(m: ModuleType) -> dict[str, Any]:
    return {"cached files": tuple(m.cache)}


def _locale(m: ModuleType) -> dict[str, Any]:
    categories = ("LC_CTYPE", "LC_COLLATE", "LC_TIME", "LC_MONETARY", "LC_NUMERIC", "LC_MESSAGES")
    return {name: m.setlocale(getattr(m, name)) for name in categories if hasattr(m, name)}


def _logging(m: ModuleType) -> dict[str, Any]:
    def config(logger: Any) -> tuple[Any, ...]:
        handlers = tuple((Same(h), _same(h.formatter), h.level) for h in logger.handlers)
        return (logger.level, handlers, logger.propagate, logger.disabled)

    # The loggers that differ from a new logger's defaults (a library's import creates plain
    # ones; getLogger() would create one).
    loggers = {
        name: config(logger)
        for name, logger in list(m.root.manager.loggerDict.items())
        if isinstance(logger, m.Logger)
        and (logger.level or logger.handlers or not logger.propagate or logger.disabled)
    }
    return {
        "root": config(m.root),
        "loggers": loggers,
        "disable": m.root.manager.disable,
        "logger class": Same(m.getLoggerClass()),
        "record factory": Same(m.getLogRecordFactory()),
        "level names": m.getLevelNamesMapping(),
    }


def _mimetypes(m: ModuleType) -> dict[str, Any]:
    return {
        "inited": m.inited,
        "types_map": tuple(m.types_map.items()),
        "common_types": tuple(m.common_types.items()),
    }


def _multiprocessing(m: ModuleType) -> dict[str, Any]:
    return {"start method": m.get_start_method(allow_none=True)}


_TRACING_KEYS = ("DISTEA_JOB", "DISTEA_PARENT", "DISTEA_PARENT_CLOCK")
"""Set by DISTEA's tracer (when tracing) to name the job a process serves for the programs
it starts: bookkeeping of the trace, not state a job leaves behind."""


_TRACING_KEYS_BYTES = tuple(key.encode() for key in _TRACING_KEYS)


def _os(m: ModuleType) -> dict[str, Any]:
    # os.environ's own bytes table (decoding every variable after every job cost more than
    # the rest of this reader); a Linux process's umask from its status file, read raw, where
    # os.umask() could only read it by setting it.
    data = getattr(m.environ, "_data", None)
    if isinstance(data, dict):
        environ = {k: v for k, v in data.items() if k not in _TRACING_KEYS_BYTES}
    else:
        environ = {k: v for k, v in m.environ.items() if k not in _TRACING_KEYS}
    found: dict[str, Any] = {
        "environ": environ,
        "cwd": m.getcwd(),
        "priority": m.getpriority(m.PRIO_PROCESS, 0),
    }
    try:
        fd = m.open("/proc/self/status", m.O_RDONLY)
        try:
            status = m.read(fd, 4096)
        finally:
            m.close(fd)
        start = status.find(b"\nUmask:")
        if start >= 0:
            end = status.find(b"\n", start + 1)
            found["umask"] = status[start + 7 : end].strip().decode()
    except OSError:
        pass
    return found


def _readline(m: ModuleType) -> dict[str, Any]:
    return {
        "history length": m.get_current_history_length(),
        "history file length": m.get_history_length(),
        "completer delims": m.get_completer_delims(),
        "completer": _same(m.get_completer()),
    }


def _reprlib(m: ModuleType) -> dict[str, Any]:
    return {"aRepr": _plain(vars(m.aRepr))}


def _resource(m: ModuleType) -> dict[str, Any]:
    names = sorted(name for name in dir(m) if name.startswith("RLIMIT_"))
    return {name: m.getrlimit(getattr(m, name)) for name in names}


def _shutil(m: ModuleType) -> dict[str, Any]:
    return {
        "archive formats": tuple(m.get_archive_formats()),
        "unpack formats": tuple((n, tuple(ext), d) for n, ext, d in m.get_unpack_formats()),
    }


def _signal(m: ModuleType) -> dict[str, Any]:
    import _signal as raw  # the same getters without signal's enum wrapping (read per job)

    handlers = {}
    for signum in raw.valid_signals():
        if signum in (m.SIGKILL, m.SIGSTOP):
            continue
        handler = raw.getsignal(signum)
        handlers[int(signum)] = handler if isinstance(handler, int) else _same(handler)
    timers = {}
    for name in ("ITIMER_REAL", "ITIMER_VIRTUAL", "ITIMER_PROF"):
        if hasattr(m, name):
            remaining, interval = m.getitimer(getattr(m, name))
            timers[name] = (remaining > 0, interval)
    blocked = tuple(sorted(int(s) for s in raw.pthread_sigmask(m.SIG_BLOCK, [])))
    return {"handlers": handlers, "timers": timers, "blocked": blocked}


def _socket(m: ModuleType) -> dict[str, Any]:
    return {"default timeout": m.getdefaulttimeout()}


def _sqlite3(m: ModuleType) -> dict[str, Any]:
    return {
        "adapters": tuple((k, Same(v)) for k, v in list(m.adapters.items())),
        "converters": tuple((k, Same(v)) for k, v in list(m.converters.items())),
    }


def _sys(m: ModuleType) -> dict[str, Any]:
    hooks = m.get_asyncgen_hooks()
    return {
        "recursion limit": m.getrecursionlimit(),
        "int max str digits": m.get_int_max_str_digits(),
        "switch interval": m.getswitchinterval(),
        "profile": _same(m.getprofile()),
        "trace": _same(m.gettrace()),
        "asyncgen hooks": (_same(hooks.firstiter), _same(hooks.finalizer)),
        "coroutine origin tracking depth": m.get_coroutine_origin_tracking_depth(),
        "dlopen flags": m.getdlopenflags(),
        "path": tuple(m.path),
        "meta_path": _idents(m.meta_path),
        "path_hooks": _idents(m.path_hooks),
    }


def _syslog(m: ModuleType) -> dict[str, Any]:
    return {"log mask": m.setlogmask(0)}  # 0 leaves the mask as it is


def _tarfile(m: ModuleType) -> dict[str, Any]:
    return {"extraction_filter": _same(getattr(m.TarFile, "extraction_filter", None))}


def _threading(m: ModuleType) -> dict[str, Any]:
    size = m.stack_size()  # the only getter sets the size to 0: set it back at once
    m.stack_size(size)
    threads = tuple(sorted((t.name, t.daemon) for t in m.enumerate()))
    return {"stack size": size, "threads": threads}


def _tracemalloc(m: ModuleType) -> dict[str, Any]:
    return {"tracing": m.is_tracing(), "traceback limit": m.get_traceback_limit()}


def _warnings(m: ModuleType) -> dict[str, Any]:
    return {
        "filters": tuple(m.filters),
        "defaultaction": m.defaultaction,
        "onceregistry": tuple(m.onceregistry),
    }


def _webbrowser(m: ModuleType) -> dict[str, Any]:
    return {"browsers": tuple(m._browsers), "try order": tuple(m._tryorder or ())}


def _xml_dom_domreg(m: ModuleType) -> dict[str, Any]:
    return {"registered": tuple((k, Same(v)) for k, v in list(m.registered.items()))}


# ---- third-party libraries ----------------------------------------------------------------


def _cloudpickle(m: ModuleType) -> dict[str, Any]:
    return {"pickled by value": tuple(sorted(m.list_registry_pickle_by_value()))}


def _hyperopt_pyll_base(m: ModuleType) -> dict[str, Any]:
    return {"scope": tuple(m.scope._impls)}


def _hypothesis(m: ModuleType) -> dict[str, Any]:
    return {
        "profile": m.settings.get_current_profile_name(),
        "default settings": repr(m.settings.default),
    }


def _matplotlib(m: ModuleType) -> dict[str, Any]:
    # dict.items: RcParams' own item access would resolve the "auto" backend (an import).
    params = {key: _plain(value) for key, value in dict.items(m.rcParams)}
    return {"rcParams": params, "colormaps": tuple(m.colormaps)}


def _matplotlib_pyplot(m: ModuleType) -> dict[str, Any]:
    return {"figures": tuple(m.get_fignums())}


def _networkx(m: ModuleType) -> dict[str, Any]:
    return {key: repr(value) for key, value in dict(m.config).items()}


def _numpy(m: ModuleType) -> dict[str, Any]:
    return {
        "printoptions": _plain(m.get_printoptions()),
        "err": m.geterr(),
        "errcall": _same(m.geterrcall()),
        "bufsize": m.getbufsize(),
    }


def _optuna_logging(m: ModuleType) -> dict[str, Any]:
    return {"verbosity": m.get_verbosity()}


def _pandas(m: ModuleType) -> dict[str, Any]:
    # get_option() on a deprecated option warns (a change of its own): the option table.
    def flat(options: dict[str, Any], prefix: str) -> Iterable[tuple[str, Any]]:
        for key, value in options.items():
            if isinstance(value, dict):
                yield from flat(value, f"{prefix}{key}.")
            else:
                yield prefix + key, _plain(value)

    accessors = {
        cls.__name__: tuple(sorted(getattr(cls, "_accessors", ())))
        for cls in (m.DataFrame, m.Series, m.Index)
    }
    return {"options": dict(flat(m._config.config._global_config, "")), "accessors": accessors}


def _papermill_engines(m: ModuleType) -> dict[str, Any]:
    return {"engines": tuple(m.papermill_engines._engines)}


def _papermill_iorw(m: ModuleType) -> dict[str, Any]:
    return {"handlers": tuple(scheme for scheme, _ in m.papermill_io._handlers)}


def _papermill_translators(m: ModuleType) -> dict[str, Any]:
    return {"translators": tuple(m.papermill_translators._translators)}


def _scipy_fft(m: ModuleType) -> dict[str, Any]:
    # No getter for the global backend: what it answers.
    result = m.fft([1.0, 0.0])
    return {"fft([1, 0])": _plain(result.tolist() if hasattr(result, "tolist") else result)}


def _scipy_special(m: ModuleType) -> dict[str, Any]:
    return {"err": m.geterr()}


def _sklearn(m: ModuleType) -> dict[str, Any]:
    return {"config": _plain(m.get_config())}


def _torch(m: ModuleType) -> dict[str, Any]:
    return {
        "default dtype": m.get_default_dtype(),
        "default device": m.get_default_device(),
        "num threads": m.get_num_threads(),
        "num interop threads": m.get_num_interop_threads(),
        "grad enabled": m.is_grad_enabled(),
        "anomaly detection": m.is_anomaly_enabled(),
        "deterministic algorithms": m.are_deterministic_algorithms_enabled(),
        "deterministic debug mode": m.get_deterministic_debug_mode(),
        "float32 matmul precision": m.get_float32_matmul_precision(),
        "printoptions": _plain(vars(m._tensor_str.PRINT_OPTS)),
        # set_flush_denormal() has no getter: a denormal that survives a multiplication.
        "flush denormal": _DENORMAL * 1.0 == 0.0,
        # torch.library.define() keeps its libraries (the operators in torch.ops) here.
        "defined libraries": len(m.library._keep_alive),
    }


def _torch_backends_cudnn(m: ModuleType) -> dict[str, Any]:
    return {"deterministic": m.deterministic, "benchmark": m.benchmark, "enabled": m.enabled}


def _transformers_logging(m: ModuleType) -> dict[str, Any]:
    return {"verbosity": m.get_verbosity(), "progress bar": m.is_progress_bar_enabled()}


def _yaml(m: ModuleType) -> dict[str, Any]:
    # The add_* functions write these class tables (each class gets its own copy on its first
    # write); their functions compare by identity.
    found: dict[str, Any] = {}
    for loader in ("BaseLoader", "FullLoader", "Loader", "SafeLoader", "UnsafeLoader"):
        cls = getattr(m, loader)
        found[f"{loader} constructors"] = tuple(cls.yaml_constructors.items())
        found[f"{loader} multi constructors"] = tuple(cls.yaml_multi_constructors.items())
        resolvers = cls.yaml_implicit_resolvers.items()
        found[f"{loader} implicit resolvers"] = tuple((k, tuple(v)) for k, v in resolvers)
    for dumper in ("BaseDumper", "Dumper", "SafeDumper"):
        cls = getattr(m, dumper)
        found[f"{dumper} representers"] = tuple(cls.yaml_representers.items())
        found[f"{dumper} multi representers"] = tuple(cls.yaml_multi_representers.items())
    return found


READERS: dict[str, Reader] = {
    "abc": _abc,
    "asyncio": _asyncio,
    "atexit": _atexit,
    "calendar": _calendar,
    "cloudpickle": _cloudpickle,
    "copyreg": _copyreg,
    "csv": _csv,
    "ctypes": _ctypes,
    "curses": _curses,
    "decimal": _decimal,
    "doctest": _doctest,
    "email.charset": _email_charset,
    "faulthandler": _faulthandler,
    "filecmp": _filecmp,
    "gc": _gc,
    "gettext": _gettext,
    "hyperopt.pyll.base": _hyperopt_pyll_base,
    "hypothesis": _hypothesis,
    "imghdr": _imghdr,
    "importlib.machinery": _importlib_machinery,
    "linecache": _linecache,
    "locale": _locale,
    "logging": _logging,
    "matplotlib": _matplotlib,
    "matplotlib.pyplot": _matplotlib_pyplot,
    "mimetypes": _mimetypes,
    "multiprocessing": _multiprocessing,
    "networkx": _networkx,
    "numpy": _numpy,
    "optuna.logging": _optuna_logging,
    "os": _os,
    "pandas": _pandas,
    "papermill.engines": _papermill_engines,
    "papermill.iorw": _papermill_iorw,
    "papermill.translators": _papermill_translators,
    "readline": _readline,
    "reprlib": _reprlib,
    "resource": _resource,
    "scipy.fft": _scipy_fft,
    "scipy.special": _scipy_special,
    "shutil": _shutil,
    "signal": _signal,
    "sklearn": _sklearn,
    "socket": _socket,
    "sqlite3": _sqlite3,
    "sys": _sys,
    "syslog": _syslog,
    "tarfile": _tarfile,
    "threading": _threading,
    "torch": _torch,
    "torch.backends.cudnn": _torch_backends_cudnn,
    "tracemalloc": _tracemalloc,
    "transformers.utils.logging": _transformers_logging,
    "warnings": _warnings,
    "webbrowser": _webbrowser,
    "xml.dom.domreg": _xml_dom_domreg,
    "yaml": _yaml,
}
"""Module name (as in ``sys.modules``) -> its reader."""


def read_registries(modules: "dict[str, Any] | None" = None) -> dict[tuple[str, str], Any]:
    """The state of every loaded module that has a reader: (module, label) -> value. A reader
    that raises gives one entry naming the exception type (never the run's failure)."""
    loaded = sys.modules if modules is None else modules
    found: dict[tuple[str, str], Any] = {}
    for name, reader in READERS.items():
        module = loaded.get(name)
        if module is None:
            continue
        try:
            values = reader(module)
        except Exception as e:  # noqa: BLE001 - a reader must never fail an invocation
            found[(name, "<reader>")] = f"unreadable: {type(e).__name__}"
            continue
        for label, value in values.items():
            found[(name, label)] = value
    return found
