"""How one invocation runs in a warm worker so that it gives what a fresh ``script:`` run gives.

Two modes, chosen per template (``@template("x", isolation="direct")``):

``fork`` (the default)
    The worker process builds the templates and never runs an invocation: every invocation
    runs in a child forked from it, which exits when the invocation ends, so nothing an
    invocation does to its process reaches another one. The next child is forked ahead of
    time, between invocations (:meth:`Isolation.idle`), and waits on a pipe for its script:
    the fork is off the invocation's path. The child leads a process group of its own (what
    the script leaves running in the background outlives the job, as under ``--executor
    local``), dies with the worker, empties the exit registries it inherited
    (:func:`._exit.forget_inherited`) and starts the global random generators where a fresh
    job's would start (:mod:`._seeds`: as the template's build left those it seeded, the others
    seeded afresh from the OS).

``direct``
    The script runs in the worker's main thread. :class:`ProcessSnapshot` records what a
    script can change in the interpreter and puts it back after it (modules imported from
    outside the installed libraries, ``os.environ``, cwd, umask, ``sys`` state, stdio and file
    descriptors 0-2, ``__main__``, logging, warnings, signals and timers, the locale, the global
    random generators (:mod:`._seeds`), ``snakemake.shell`` settings); then
    :mod:`._fingerprint` compares the process with the process as the template left it, and
    any difference retires the worker (never going on silently in a changed process). Used
    where forking is unsafe (:mod:`._hazards`: a GPU runtime, threads), or where a template
    asks for it.

In both modes an invocation ends as ``python script.py`` ends (:mod:`._exit`): threads joined,
exit handlers run, child processes and pools finalised, the script's globals cleared and
collected, so files it left open are flushed. This module only runs scripts; the worker owns
the connection, heartbeats and process handling.
"""

import _signal
import ast
import atexit
import builtins
import copy
import dataclasses
import functools
import gc
import importlib
import importlib.machinery
import io
import itertools
import linecache
import locale
import logging
import marshal
import os
import pickle
import resource
import select
import signal
import stat
import struct
import sys
import tempfile
import threading
import time
import traceback
import types
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, NoReturn, Optional

from stickyinvoc import fingerprint as _fingerprint

from . import _audit
from ._exit import (
    ExitScope,
    FilePosition,
    Teardown,
    flush_template_files,
    forget_inherited,
    fresh_exit,
    moved_template_files,
    template_file_positions,
)
from ._liveness import Fate, classify_exit
from ._names import Names
from ._preamble import PREAMBLE
from ._prefault import PageLog, collapse_anonymous
from ._seeds import Seeds
from ._shell_prefix import PrefixEffects
from ._shell_prefix import apply as apply_prefix
from ._snakemake_compat import loaded_shell, pip_deployments_path
from ._worker_env import THREAD_VARIABLES
from .supervisor import die_with_parent_call

ISOLATION_MODES = ("fork", "direct")

SIGINT_IGNORED_AT_START = False
"""Whether the worker was started with SIGINT ignored (Snakemake started under ``nohup`` or in
the background of a script): a fresh interpreter keeps an inherited SIG_IGN, so a script's
process does too (set by the worker's ``main`` before it ignores SIGINT itself)."""

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
    "last_type", "last_value", "last_traceback", "orig_argv",
)  # fmt: skip


@dataclass
class Script:
    """One script run: what ``script:``'s preamble would give the script, and its code."""

    code: Any
    script_path: str
    scriptdir: Optional[str]
    snakemake: Any
    workdir: str
    repeats: int = 1
    benchmarked: bool = False
    """Measure memory peaks and I/O for ``benchmark:`` (reading them costs milliseconds)."""
    imports: frozenset[str] = frozenset()
    """Names of the modules the script's source imports (for patch detection)."""
    searchpaths: Optional[list[str]] = None
    """What the preamble appends to ``sys.path``; None: worked out here (tests, old managers)."""
    template: Optional[str] = None
    """The template the job's rule names (its seeded generators, :mod:`._seeds`)."""
    source: Optional[str] = None
    """The script's source, when ``code`` was compiled by :func:`compile_script` (it then runs
    from a temporary file as Snakemake writes one); None: ``code`` keeps the script's own path
    (DISTEA's instrumented code)."""
    prefix: Optional[PrefixEffects] = None
    """What the Snakefile's ``shell.prefix()`` would do to the script under ``--executor local``
    (variables, folder, umask; :mod:`._shell_prefix`)."""
    temporary_script: Optional[str] = None
    """Fork mode: where the child writes the temporary script, named by the parent, which
    removes it once the child is done (as Snakemake removes it after a local job's process,
    out of the job's sight: its audit hooks never see the removal)."""


@dataclass
class Outcome:
    """What one invocation produced, in either mode."""

    ok: bool
    error: Optional[str] = None
    seconds: list[float] = field(default_factory=list)
    cpu_seconds: list[float] = field(default_factory=list)
    max_rss_mb: Optional[float] = None
    usage: dict[str, float] = field(default_factory=dict)
    """What Snakemake's ``benchmark:`` records beside the times (:func:`process_usage`)."""
    warnings: list[str] = field(default_factory=list)
    undeclared_writes: list[str] = field(default_factory=list)
    """Paths the script changed outside its outputs and logs (see :mod:`._audit`)."""
    wrote_in: Optional[list[str]] = None
    """Every path the script wrote, removed or renamed, and each one's folder (None: not
    known, as for a child killed from outside; see :attr:`._audit.WriteWatch.wrote_in`)."""
    retire: Optional[str] = None
    """Direct mode: what the invocation changed in the worker's process that a fresh process
    would not carry (:mod:`._fingerprint`); the worker must not run another invocation."""
    lost: Optional[str] = None
    """Fork mode: the invocation's process was killed from outside (why): requeue it."""
    imported: list[str] = field(default_factory=list)
    """Fork mode: installed libraries (top-level names) the script imported that the template
    process had not: every forked invocation imports them again (:func:`new_libraries`)."""


@dataclass
class _Spare:
    """A child forked ahead of its invocation: it waits on ``control`` for its script and
    writes its :class:`Outcome` to ``result``."""

    pid: int
    control: int
    result: int


def _ignore(pid: int) -> None:
    pass


_LENGTH = struct.Struct("!Q")


def _send(fd: int, data: bytes) -> None:
    view = memoryview(_LENGTH.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def _receive(fd: int, pid: Optional[int]) -> Optional[bytes]:
    """One length-prefixed message from ``fd``; None at end of file, or once process ``pid``
    has ended without sending one (a process the script started in the background may still
    hold the pipe open, so end of file alone cannot be waited for)."""
    pidfd: Optional[int] = None
    if pid is not None and hasattr(os, "pidfd_open"):
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:
            pidfd = None
    buf = bytearray()
    try:
        while True:
            watched = [fd] if pidfd is None else [fd, pidfd]
            ready, _, _ = select.select(watched, [], [], 0.5 if pid is not None else None)
            if fd in ready:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    return None
                buf += chunk
                if len(buf) >= _LENGTH.size:
                    (need,) = _LENGTH.unpack_from(buf)
                    if len(buf) >= _LENGTH.size + need:
                        return bytes(buf[_LENGTH.size : _LENGTH.size + need])
                continue
            if pid is not None and _has_ended(pid, pidfd in ready if pidfd is not None else False):
                os.set_blocking(fd, False)
                try:
                    while chunk := os.read(fd, 1 << 20):
                        buf += chunk
                except BlockingIOError:
                    pass
                if len(buf) >= _LENGTH.size:
                    (need,) = _LENGTH.unpack_from(buf)
                    if len(buf) >= _LENGTH.size + need:
                        return bytes(buf[_LENGTH.size : _LENGTH.size + need])
                return None
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _open_fds() -> list[int]:
    try:
        return [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:  # no /proc: nothing is rewound
        return []


def _file_positions() -> dict[int, tuple[int, int, int]]:
    """(device, inode, position) of each open regular file but stdio, by descriptor."""
    found = {}
    for fd in _open_fds():
        if fd <= 2:
            continue
        try:
            info = os.fstat(fd)
            if stat.S_ISREG(info.st_mode):
                found[fd] = (info.st_dev, info.st_ino, os.lseek(fd, 0, os.SEEK_CUR))
        except OSError:
            continue
    return found


def _open_file_state(fd: int) -> Optional[tuple[int, int, int, int]]:
    try:
        info = os.fstat(fd)
    except OSError:
        return None
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns)


def _rewind(offsets: dict[int, tuple[int, int, int]]) -> None:
    """In a forked child: put the template's open files where its build left them. A child
    shares each file's position with the template process and every other child (one open
    file), so a job that read or wrote through a file the template keeps moved it for the next
    job; a fresh job opens the file anew."""
    for fd, (device, inode, position) in offsets.items():
        try:
            info = os.fstat(fd)
            if (info.st_dev, info.st_ino) == (device, inode):
                os.lseek(fd, position, os.SEEK_SET)
        except OSError:
            continue


def _readable(fd: int) -> bool:
    try:
        return bool(select.select([fd], [], [], 0)[0])
    except (OSError, ValueError):
        return True


def _has_ended(pid: int, signalled: bool) -> bool:
    if signalled:
        return True
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _become_invocation_process(die_with_parent: Optional[Callable[[], Any]]) -> None:
    """In a child just forked from the template process: lead a process group of its own
    (what the script starts in the background outlives the invocation, as under ``--executor
    local``; the worker's supervisor kills this group only when the worker is lost), die with
    the template process and empty the inherited exit registries."""
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
    if die_with_parent is not None:
        die_with_parent()
    forget_inherited()


def gc_walk_warning(walks: Iterable[str]) -> str:
    """One line for a job that walked the garbage collector's objects: what it did not see."""
    return (
        f"the script called {' and '.join(sorted(f'{w}()' for w in walks))}: the template's "
        "objects are frozen (gc.freeze) in a sticky worker, so they are not listed or "
        "collected, where a fresh job's walk sees its own build's; run such checks under "
        "--executor local"
    )


def _running_processes() -> list[Any]:
    """The ``subprocess.Popen`` objects of running processes in this process (after a template
    build: the servers it started)."""
    subprocess = sys.modules.get("subprocess")
    if subprocess is None:
        return []
    return [
        obj
        for obj in gc.get_objects()
        # type(), not isinstance(): a deprecated proxy (torch.distributed.reduce_op) warns
        # when asked for its __class__.
        if issubclass(type(obj), subprocess.Popen) and obj.returncode is None
    ]


def _adopt_processes(processes: list[Any]) -> None:
    """In a forked child: the template's processes are its parent's children, not its own, so
    ``poll()`` would say they ended (``ECHILD``: status 0). Ask the kernel instead: running,
    or ended with the status it keeps until the template process reaps them."""
    for proc in processes:
        proc._internal_poll = functools.partial(_foreign_poll, proc)
        proc._wait = functools.partial(_foreign_wait, proc)


def _foreign_poll(proc: Any, _deadstate: Any = None, **_: Any) -> Optional[int]:
    if proc.returncode is not None:
        return proc.returncode
    try:
        with open(f"/proc/{proc.pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except OSError:  # reaped by the template process: ended, status unknown (as on ECHILD)
        proc.returncode = 0
        return 0
    if fields[0] not in (b"Z", b"X"):
        return None
    status = int(fields[49]) if len(fields) > 49 else 0  # exit_code, as waitpid reports it
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode


def _foreign_wait(proc: Any, timeout: Optional[float] = None) -> int:
    deadline = None if timeout is None else time.monotonic() + timeout
    while True:
        code = _foreign_poll(proc)
        if code is not None:
            return code
        if deadline is not None and time.monotonic() >= deadline:
            raise sys.modules["subprocess"].TimeoutExpired(proc.args, timeout)
        time.sleep(0.02)


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


_TMPDIR_VARIABLES = ("TMPDIR", "TMP", "TEMPDIR", "TEMP")


def new_libraries(imports: list[str], roots: tuple[str, ...]) -> list[str]:
    """Installed libraries (top-level names, not the standard library's) that ``imports``
    (the modules imported while the script ran, :attr:`._audit.WriteWatch.imports`) brought in
    whole, as far as they are still loaded: a library counts when its top-level module was
    among them (a new submodule of a library the template had loaded does not); the one that
    brought the most modules (the costliest import, roughly) first. Looks only at those
    names: walking all of ``sys.modules`` in a forked child would write to every name's
    reference count and so copy the pages of thousands of the template's objects."""
    modules = sys.modules
    new = {name for name in imports if name in modules}
    count: dict[str, int] = {}
    for name in new:
        top = name.partition(".")[0]
        if top in count:
            count[top] += 1
            continue
        if top not in new or top in sys.stdlib_module_names:
            continue
        module = modules.get(top)
        if type(module) is not types.ModuleType:
            continue  # None, a lazily loaded module, a stand-in object: never touched here
        spec = module.__dict__.get("__spec__")
        if getattr(spec, "origin", None) in ("built-in", "frozen"):
            continue
        if module_is_library(module, roots):
            count[top] = 1
    return sorted(count, key=lambda top: (-count[top], top))


def job_environment(snakemake: Any) -> dict[str, str]:
    """What Snakemake adds to a ``script:`` job's environment (``snakemake.shell`` runs the
    script's interpreter with them): the job's threads for the linear-algebra libraries, and
    its ``tmpdir`` resource; and ``_``, which the shell sets to the command it runs (the
    interpreter)."""
    env: dict[str, str] = {"_": sys.executable} if sys.executable else {}
    threads = getattr(snakemake, "threads", None)
    if threads is not None:
        env.update(dict.fromkeys(THREAD_VARIABLES, str(threads)))
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
        return int(code) & 0xFF, None  # the OS keeps 8 bits: sys.exit(256) succeeds
    return 1, str(code)


def _under(path: Optional[str], roots: tuple[str, ...]) -> bool:
    if not path:
        return False
    folder = os.path.dirname(os.path.abspath(path))
    return any(folder == r or folder.startswith(r + os.sep) for r in roots)


def module_is_library(module: Any, roots: tuple[str, ...]) -> bool:
    """True for a module a fresh process would import from the same file whatever the script's
    folder: built in, or loaded from an installed-library folder (``roots``). Read from the
    module's own dict: a module-level ``__getattr__`` (``torch.classes``) answers anything."""
    try:
        own = vars(module)
    except TypeError:
        return False
    spec = own.get("__spec__")
    origin = getattr(spec, "origin", None) if spec is not None else None
    if origin in ("built-in", "frozen") or (
        origin is None
        and spec is not None
        and not getattr(spec, "submodule_search_locations", None)
    ):
        return True
    path = own.get("__file__") or origin
    if isinstance(path, str) and os.path.isabs(path):
        return _under(path, roots)
    locations = own.get("__path__")
    if isinstance(locations, list | tuple) or type(locations).__name__ == "_NamespacePath":
        found = [p for p in locations if isinstance(p, str)]
        if found:
            return all(_under(os.path.join(p, "x"), roots) for p in found)
    # No file of its own (``torch._C._onnx``, made by its package's extension module), or a
    # made-up one (``torch.ops``: "_ops.py"): it belongs to its package.
    parent = str(own.get("__name__", "")).rpartition(".")[0]
    owner = sys.modules.get(parent) if parent else None
    return owner is not None and owner is not module and module_is_library(owner, roots)


COLLAPSE_AFTER = 128
"""Fork mode: after this many children of one template build, the template process's
anonymous memory goes into huge pages (:func:`._prefault.collapse_anonymous`). Collapsing
costs about what 80 forks save (both grow with that memory: about 0.6 s for a MiniLM worker's
300 MB, after which each fork and its child's exit take 7 ms less CPU), so a worker pays it
only once it has run many invocations: one running fewer never does, and one running a
thousand gains about 6 s."""


class Isolation:
    """Runs invocations of one worker in direct or fork mode. Created once, before any template
    is loaded, so that it knows the interpreter's pristine import path."""

    def __init__(self, link: Any = None) -> None:
        """``link``: the worker's :class:`~.supervisor.Link` (None in tests), told the process
        group of the child running an invocation (its supervisor kills that group too when
        the worker is lost) and asked which signal the child sent itself."""
        cwd = os.getcwd()
        # A fresh `python script.py` starts with the interpreter's path (not this worker's cwd);
        # importing snakemake (the preamble does) appends its pip-deployments folder at the end.
        self.pip_deployments = pip_deployments_path()
        self.base_path = [
            p for p in sys.path if p and os.path.abspath(p) != cwd and p != self.pip_deployments
        ]
        roots = {os.path.abspath(p) for p in self.base_path}
        self.library_roots = tuple(sorted(r for r in roots if os.path.isdir(r)))
        self.link = link
        self.seeds = Seeds()
        self.names = Names()
        self.processes: list[Any] = []
        """The ``subprocess.Popen`` objects of processes the templates started (a server)."""
        self.on_child = link.set_invocation_group if link is not None else _ignore
        self.spare: Optional[_Spare] = None
        self.zombies: list[int] = []
        self.pristine: Optional[_fingerprint.Fingerprint] = None
        self.own_files = {(fd, dev, ino) for fd, (dev, ino, _) in _file_positions().items()}
        """The files the worker had open before any template (descriptor, device, inode):
        never rewound, flushed or compared."""
        self.builtins_names = frozenset(vars(builtins))
        self.sys_names = frozenset(vars(sys))
        """The builtins' and ``sys``'s names before any template: a forked job's teardown
        drops the others (:class:`._exit.Teardown`)."""
        self.template_files: list[Callable[[], Any]] = []
        """The writable files the template's build left open (flushed at a job's end)."""
        self.template_positions: list[FilePosition] = []
        """Every file object the build left, as it left it (direct mode: compared after a
        job, :func:`._exit.moved_template_files`)."""
        self.offsets: dict[int, tuple[int, int, int]] = {}
        """The template's regular files: (device, inode, position) as its build left them."""
        self.open_file_states: dict[int, tuple[int, int, int, int]] = {}
        """The template's regular files: (device, inode, size, mtime) after its build, for
        :meth:`open_files_changed`."""
        self.pages = PageLog()
        """The pages the last recording child touched, populated by the next spare ahead of
        its script (:mod:`._prefault`)."""
        self.die_with_parent = die_with_parent_call()
        self.forked = 0
        self.collapsed = False
        """This template process's anonymous memory is in huge pages
        (:func:`collapse_anonymous`)."""
        self.torch_sized = False
        """A template build sized torch's pool itself (``torch.set_num_threads``): jobs keep
        that size, as a fresh job that builds the template does."""

    def invocation_path(self, script: "Script") -> list[str]:
        """``sys.path`` as a fresh ``script:`` process has it once the preamble ran."""
        return self.script_path(script.workdir, script.scriptdir, script.searchpaths)

    def script_path(
        self, workdir: str, scriptdir: Optional[str], searchpaths: Optional[list[str]]
    ) -> list[str]:
        """``sys.path`` of a fresh ``script:`` process in ``workdir`` whose script is in
        ``scriptdir``, once the preamble appended ``searchpaths`` (None: worked out here)."""
        if searchpaths is None:
            from ._snakemake_compat import get_snakemake_searchpaths

            searchpaths = [*get_snakemake_searchpaths(), *filter(None, [scriptdir])]
        path = [os.path.join(workdir, ".snakemake", "scripts"), *self.base_path]
        path += searchpaths
        if self.pip_deployments:
            path.append(self.pip_deployments)
        return path

    # ---- the two modes -------------------------------------------------------------------------

    def run(self, script: Script, mode: str = "fork") -> Outcome:
        if mode == "fork" and hasattr(os, "fork"):
            return self.run_forked(script)
        return self.run_direct(script)

    def state_changed(
        self,
        template: str = "",
        seeded: frozenset[str] = frozenset(),
        from_os: tuple[Any, ...] = (),
        torch_threads: Optional[int] = None,
        names_used: Optional[dict[str, int]] = None,
        state: Any = None,
    ) -> None:
        """The template process changed (``template`` was built; ``seeded``: the generators
        its build seeded with a fixed seed, ``from_os``: the generator objects it made from the
        OS, ``torch_threads``: what it passed to ``torch.set_num_threads``, :mod:`._seeds`;
        ``names_used``: how far it advanced the default-name counters, :mod:`._names`): a
        spare child forked before holds the old state, and direct mode's baseline is out of
        date."""
        self.seeds.built(template, seeded, from_os, state)
        self.names.built(template, names_used or {})
        if torch_threads is not None:
            self.torch_sized = True  # a fresh job's torch keeps the build's size
        self.processes = _running_processes()
        self.template_files = flush_template_files(self.own_files)
        self.template_positions = template_file_positions(self.own_files)
        self._discard_spare()
        self.pristine = None
        self.pages.clear()
        self.forked = 0
        self.collapsed = False
        for fd, where in _file_positions().items():
            if (fd, *where[:2]) not in self.own_files:
                self.offsets.setdefault(fd, where)  # children move the positions they share
        self.open_file_states = {
            fd: found for fd in self.offsets if (found := _open_file_state(fd)) is not None
        }

    def before_build(self) -> None:
        """Before a template's build: the files the worker opened since it started (a DISTEA
        trace) are its own, not the template's (never rewound, flushed or compared)."""
        for fd, (device, inode, _) in _file_positions().items():
            if fd not in self.offsets:
                self.own_files.add((fd, device, inode))

    def idle(self, fork_next: bool) -> None:
        """Between invocations: reap ended children and, for fork mode, fork the next child
        now, so that its cost is off the next invocation's path."""
        self._reap()
        if fork_next and self.spare is None and hasattr(os, "fork"):
            self.spare = self._fork_spare()

    def close(self) -> None:
        self._discard_spare()
        self._reap(block=True)

    # ---- direct mode ---------------------------------------------------------------------

    def run_direct(self, script: Script) -> Outcome:
        if self.pristine is None:
            gc.freeze()  # the template's objects: later collections skip them
            tempfile.gettempdir()  # cached by every invocation's audit (_audit.start) anyway
            self.pristine = _fingerprint.Fingerprint()
        pristine = self.pristine
        snapshot = ProcessSnapshot(self, script)
        hooks = _audit.hooks_added()
        pristine.watch_imports()
        try:
            outcome = self._execute(script, snapshot)
        finally:
            pristine.stop_watching()
            restore_warnings = snapshot.restore()
        outcome.warnings.extend(restore_warnings)
        changes = pristine.changes()
        changes.extend(self._moved_files())
        if _audit.hooks_added() != hooks:
            changes.append("an audit hook added (sys.addaudithook)")
        described = _fingerprint.describe(changes)
        if described is not None:
            outcome.retire = (
                f"the script changed its worker's process ({described}) (direct mode; fork "
                "mode, the default, needs no such check)"
            )
        gc.freeze()  # what survived the invocation's exit: the next one's collection skips it
        return outcome

    def open_files_changed(self) -> list[str]:
        """The regular files the template keeps open whose contents a job changed (their size
        or time; an unnamed ``TemporaryFile`` too): a fresh job's build opens or makes its
        own, so the worker is retired (:meth:`._worker.Worker.files_checked`)."""
        changed = []
        for fd, before in self.open_file_states.items():
            now = _open_file_state(fd)
            if now is not None and now[:2] == before[:2] and now != before:
                changed.append(f"a file the template keeps open (fd {fd}) was written")
        return changed

    def _moved_files(self) -> list[str]:
        """Direct mode: the files the template keeps open that the job moved (read from or
        flushed writes to): a fresh job opens its own copy at the build's position, and
        fork mode puts them back (:func:`_rewind`); here the next job would go on from there."""
        moved = []
        for fd, (device, inode, position) in self.offsets.items():
            try:
                info = os.fstat(fd)
                if (info.st_dev, info.st_ino) != (device, inode):
                    continue
                if os.lseek(fd, 0, os.SEEK_CUR) != position:
                    moved.append(f"the position of a file the template keeps open (fd {fd})")
            except OSError:
                continue
        return moved_template_files(self.template_positions) + moved

    # ---- fork mode -----------------------------------------------------------------------

    def run_forked(self, script: Script) -> Outcome:
        """Run the script in a child forked from this process, which never runs one itself;
        each benchmark repeat in a child of its own, as each is a process of its own under
        ``--executor local``."""
        if script.repeats <= 1:
            return self._run_in_child(script)
        total = Outcome(True, wrote_in=[])
        for iteration in range(script.repeats):
            script.snakemake.bench_iteration = iteration
            single = dataclasses.replace(script, repeats=1)
            outcome = self._run_in_child(single)
            total.warnings += outcome.warnings
            total.undeclared_writes += outcome.undeclared_writes
            if total.wrote_in is not None:  # None once one repeat's is not known
                known = outcome.wrote_in
                total.wrote_in = None if known is None else total.wrote_in + known
            if not outcome.ok:
                outcome.warnings = total.warnings
                outcome.undeclared_writes = total.undeclared_writes
                outcome.wrote_in = None  # the other repeats' are not carried: not known
                return outcome
            total.seconds += outcome.seconds
            total.cpu_seconds += outcome.cpu_seconds
            total.max_rss_mb = max(total.max_rss_mb or 0.0, outcome.max_rss_mb or 0.0)
            total.usage = outcome.usage
            if iteration + 1 < script.repeats:
                self.idle(fork_next=True)
        return total

    def _run_in_child(self, script: Script) -> Outcome:
        spare, self.spare = self.spare or self._fork_spare(), None
        self.forked += 1
        record = self.forked <= 3 or self.forked % 16 == 0  # the pages barely change
        temporary = temporary_script_path(script) if script.source is not None else None
        skeleton = dataclasses.replace(script, code=None, temporary_script=temporary)
        payload = pickle.dumps((skeleton, marshal.dumps(script.code), record))
        if self.link is not None:
            self.link.child_signal(reset=True)
        self.on_child(spare.pid)
        try:
            try:
                _send(spare.control, payload)
            except OSError:
                pass  # the child is gone; its status says why
            finally:
                os.close(spare.control)
            data = _receive(spare.result, spare.pid)
        finally:
            os.close(spare.result)
            self.on_child(0)
            _remove_temporary_script(temporary)
        if data is not None:
            self.zombies.append(spare.pid)
            try:
                return pickle.loads(data)  # noqa: S301 - our own child, through our own pipe
            except Exception:  # noqa: BLE001
                pass
        return self._child_ended(spare.pid)

    def _child_ended(self, pid: int) -> Outcome:
        """The child ended without an outcome: the script ended its process (``os._exit``, a
        signal it sent itself, a crash: the job ends once, as under ``--executor local``), or
        something outside killed it (the invocation is requeued, as when a worker is lost,
        once every process it started is killed)."""
        info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
        exited = info is not None and info.si_code == os.CLD_EXITED
        status = info.si_status if info is not None else 1
        cause = classify_exit(
            exit_status=status if exited else None,
            signal_number=None if exited else status,
            self_signal=self.link.child_signal() if self.link is not None else None,
        )
        if cause.fate is Fate.REQUEUE:
            try:
                os.killpg(pid, signal.SIGKILL)  # what the killed invocation started
            except OSError:
                pass
        os.waitpid(pid, 0)
        if cause.fate is Fate.SUCCEED:
            return Outcome(True)
        text = cause.cause.replace("worker process", "process")
        return Outcome(False, text, lost=text if cause.fate is Fate.REQUEUE else None)

    def _fork_spare(self) -> "_Spare":
        for stream in (sys.stdout, sys.stderr):
            _flush(stream)
        if self.forked >= COLLAPSE_AFTER and not self.collapsed:
            self.collapsed = True
            self._reap(block=True)  # pages an exiting child still shares are not collapsed
            collapse_anonymous()
        control_r, control_w = os.pipe()
        result_r, result_w = os.pipe()
        gc.freeze()  # the child's collections then skip the warm objects: fewer copied pages
        pid = os.fork()
        if pid == 0:
            os.close(control_w)
            os.close(result_r)
            self._child(control_r, result_w)
        gc.unfreeze()
        os.close(control_r)
        os.close(result_w)
        return _Spare(pid, control_w, result_r)

    def _child(self, control: int, result: int) -> NoReturn:
        """A spare child: become a pristine invocation process, wait for its one script, run
        it, finalise what it started, report, and leave without the parent's cleanup."""
        status = 0
        try:
            _become_invocation_process(self.die_with_parent)
            _adopt_processes(self.processes)
            self.pages.populate(lambda: _readable(control))  # while no script is here
            payload = _receive(control, None)
            os.close(control)
            if payload is None:
                os._exit(0)  # discarded: the template process changed
            skeleton, code, record = pickle.loads(payload)  # noqa: S301 - from our own parent
            _rewind(self.offsets)
            script = dataclasses.replace(skeleton, code=marshal.loads(code))
            job_threads(script.snakemake, torch_too=not self.torch_sized)
            snapshot = ProcessSnapshot(self, script, in_child=True)
            outcome = self._execute(script, snapshot)
            outcome.imported = new_libraries(snapshot.imports, self.library_roots)
            _send(result, pickle.dumps(outcome))
            if record and _audit.hooks_added() == snapshot.hooks:  # no job's hook sees it
                self.pages.record()  # the job is done: what the next spare populates
        except BaseException:  # noqa: BLE001 - nothing may escape a forked child
            traceback.print_exc()
            status = 70
        finally:
            os._exit(status)

    def _discard_spare(self) -> None:
        spare, self.spare = self.spare, None
        if spare is not None:
            os.close(spare.control)  # the child reads end-of-file and exits
            os.close(spare.result)
            self.zombies.append(spare.pid)

    def _reap(self, block: bool = False) -> None:
        for pid in list(self.zombies):
            try:
                done, _ = os.waitpid(pid, 0 if block else os.WNOHANG)
            except ChildProcessError:
                done = pid
            if done:
                self.zombies.remove(pid)

    # ---- running the code ------------------------------------------------------------------

    def _execute(self, script: Script, snapshot: "ProcessSnapshot") -> Outcome:
        """Run the script (all its repeats), its writes outside its outputs and logs audited
        (:mod:`._audit`). In fork mode this runs in the child, so the child's writes are the
        ones seen, and they come back with the pickled :class:`Outcome`."""
        watch = _audit.start(os.getcwd(), script.snakemake)
        snapshot.imports = watch.imports  # filled as the script imports
        try:
            outcome = self._execute_unaudited(script, snapshot)
        finally:
            undeclared = _audit.stop()
        outcome.undeclared_writes = undeclared
        outcome.wrote_in = None if watch.wrote_in is None else sorted(watch.wrote_in)
        if watch.gc_walks:
            outcome.warnings.append(gc_walk_warning(watch.gc_walks))
        return outcome

    def _execute_unaudited(self, script: Script, snapshot: "ProcessSnapshot") -> Outcome:
        seconds: list[float] = []
        cpu: list[float] = []
        started = process_usage() if script.benchmarked else {}
        for iteration in range(max(1, script.repeats)):
            if script.repeats > 1:
                script.snakemake.bench_iteration = iteration
            snapshot.enter_script()  # its globals: held by the module only (a fork child's exit)
            wall, proc = time.perf_counter(), time.process_time()
            failure: Optional[str] = None
            code = 0  # how a process the script forked, running off the script's end, exits
            try:
                exec(snapshot.code, snapshot.namespace)
            except SystemExit as e:
                snapshot.exited = True
                status, message = exit_status(e.code)
                code = status
                if message is not None:  # as the interpreter does, to the script's stderr
                    try:
                        print(message, file=sys.stderr)
                    except (OSError, ValueError, AttributeError):
                        pass
                if status != 0:
                    detail = f": {message}" if message else ""
                    failure = f"script exited with status {status}{detail}"
            except BaseException:  # noqa: BLE001 - KeyboardInterrupt too: the script raised it
                code = 1
                failure = script_traceback(script.script_path, snapshot.code.co_filename)
                _print_uncaught(snapshot.code.co_filename)  # to the script's stderr, excepthook
            finally:
                snapshot.leave_script()
                if os.getpid() != snapshot.pid:  # a child the script forked ran off its end
                    os._exit(120 if snapshot.flush_failed else code)
            if snapshot.flush_failed:  # the interpreter's exit status then, whatever the script's
                return Outcome(
                    False, "script exited with status 120: flushing sys.stdout or sys.stderr failed"
                )
            if failure is not None:
                return Outcome(False, failure)
            seconds.append(time.perf_counter() - wall)
            cpu.append(time.process_time() - proc)
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
        usage = process_usage() if script.benchmarked else {}
        for name in ("io_in", "io_out"):  # what this job read and wrote, not the worker
            if name in usage:
                usage[name] = round(usage[name] - started.get(name, 0.0), 2)
        return Outcome(True, None, seconds, cpu, rss_mb, usage)


def process_usage() -> dict[str, float]:
    """This process's memory peaks and I/O in MB, as Snakemake's ``benchmark:`` measures a
    job's process with psutil (``max_vms``, ``max_uss``, ``max_pss``, ``io_in``,
    ``io_out``); Linux ``/proc``, empty elsewhere."""
    found: dict[str, float] = {}
    mb = 1024.0 * 1024.0
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmPeak:"):
                    found["max_vms"] = round(int(line.split()[1]) * 1024 / mb, 2)
        private = 0
        with open("/proc/self/smaps_rollup") as f:
            for line in f:
                name, _, rest = line.partition(":")
                if name == "Pss":
                    found["max_pss"] = round(int(rest.split()[0]) * 1024 / mb, 2)
                elif name in ("Private_Clean", "Private_Dirty"):
                    private += int(rest.split()[0]) * 1024
        found["max_uss"] = round(private / mb, 2)
        with open("/proc/self/io") as f:
            io = dict(line.split(":", 1) for line in f if ":" in line)
        found["io_in"] = int(io["read_bytes"]) / mb
        found["io_out"] = int(io["write_bytes"]) / mb
    except (OSError, ValueError, KeyError, IndexError):
        pass
    return found


def _print_uncaught(script_path: str) -> None:
    """What the interpreter does with an exception nobody caught: ``sys.excepthook`` (the
    script's own, if it set one), which prints the traceback to ``sys.stderr`` (the script's
    log, if it redirected it), from the script's frames down."""
    etype, value, tb = sys.exc_info()
    while tb is not None and tb.tb_frame.f_code.co_filename != script_path:
        tb = tb.tb_next
    if etype is None or value is None:
        return
    value.__traceback__ = tb  # the hook prints the exception's own traceback
    # As the interpreter does before calling the hook: what atexit handlers and post-mortem
    # tools read (direct mode takes them away again, _SYS_VALUES).
    sys.last_type, sys.last_value, sys.last_traceback = etype, value, tb
    try:
        sys.excepthook(etype, value, tb)
    except BaseException:  # noqa: BLE001 - a broken hook: as the interpreter, say so
        try:
            print("Error in sys.excepthook:", file=sys.stderr)
            traceback.print_exception(etype, value, tb)
        except Exception:  # noqa: BLE001
            pass


def _relocated(code: Any, old: str, new: str) -> Any:
    """``code`` and the code objects nested in it, ``co_filename`` ``old`` renamed ``new``."""
    consts = tuple(
        _relocated(c, old, new) if isinstance(c, types.CodeType) else c for c in code.co_consts
    )
    if code.co_filename == old:
        return code.replace(co_filename=new, co_consts=consts)
    return code.replace(co_consts=consts)


def temporary_script_path(script: Script) -> str:
    """A new name for the script's temporary copy, as Snakemake's ``script:`` names it."""
    name = f"tmp{os.urandom(4).hex()}.{os.path.basename(script.script_path)}"
    return os.path.join(script.workdir, ".snakemake", "scripts", name)


def _write_temporary_script(path: str, source: str) -> bool:
    """Write what Snakemake's ``script:`` would run (preamble and source), unwatched by the
    audit: tracebacks, warnings and ``inspect`` read the script's lines from it."""
    try:
        with _audit.paused():
            os.makedirs(os.path.dirname(path), exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(PREAMBLE + source)
        return True
    except OSError:  # a read-only working directory: tracebacks show no source lines
        return False


def _remove_temporary_script(path: Optional[str]) -> None:
    if path is None:
        return
    try:
        with _audit.paused():
            os.unlink(path)
    except OSError:
        pass


def script_traceback(script_path: str, ran_as: Optional[str] = None) -> str:
    """The traceback from the user's script down, without this worker's own frames, for the
    job's error message. ``ran_as``: the temporary script's name the code ran under; its
    frames are shown at the script's own path and lines."""
    cached = set(linecache.cache)  # the worker's own reading: not the script's (direct mode)
    try:
        return _script_traceback(script_path, ran_as)
    finally:
        for added in set(linecache.cache) - cached:
            linecache.cache.pop(added, None)


def _script_traceback(script_path: str, ran_as: Optional[str]) -> str:
    etype, value, tb = sys.exc_info()
    frames = traceback.extract_tb(tb)
    name = ran_as or script_path
    first = next((i for i, f in enumerate(frames) if f.filename == name), 0)
    shown = frames[first:]
    if ran_as is not None:
        offset = PREAMBLE.count("\n")
        shown = traceback.StackSummary.from_list(
            [
                traceback.FrameSummary(script_path, (f.lineno or offset) - offset, f.name)
                if f.filename == ran_as
                else f
                for f in shown
            ]
        )
    lines = traceback.format_list(shown) + traceback.format_exception_only(etype, value)
    text = "Traceback (most recent call last):\n" + "".join(lines)
    if etype is KeyboardInterrupt:
        text += "(KeyboardInterrupt raised by the script; the worker stays up)\n"
    return text


def _flush(stream: Any) -> None:
    try:
        if stream is not None and not getattr(stream, "closed", False):
            stream.flush()
    except Exception:
        pass


# ---- the snapshot of one direct invocation ---------------------------------------------------


def _affinity() -> Optional[frozenset[int]]:
    """The CPUs this process may run on (None where the platform cannot say)."""
    try:
        return frozenset(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None


def _restore_affinity(cpus: Optional[frozenset[int]]) -> None:
    if cpus is not None and _affinity() != cpus:
        try:
            os.sched_setaffinity(0, cpus)
        except OSError:
            pass


class ProcessSnapshot:
    """Everything one invocation may change, taken before it and put back after it."""

    def __init__(self, isolation: Isolation, script: Script, in_child: bool = False) -> None:
        self.iso, self.script, self.in_child = isolation, script, in_child
        self.pid = os.getpid()
        # A fork child starts from emptied exit registries (_exit.forget_inherited).
        self.exit_scope = ExitScope.forked() if in_child else ExitScope.now()
        self.atexit: list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]] = []
        self.namespace: dict[str, Any] = {}
        self.code: Any = script.code
        """What runs: the script's code, named as the temporary script (:meth:`enter_script`)."""
        self.written: Optional[str] = None
        self.leftover_threads: list[threading.Thread] = []
        self.flush_failed = False
        """Flushing the script's standard streams at its exit failed: a fresh process exits
        with status 120 then (:class:`._exit.ExitResult`)."""
        self.exited = False
        """The script ended with ``sys.exit`` (SystemExit)."""
        self.logging: Optional[_LoggingState] = None
        self.tempdir: Optional[tuple[Any, Optional[str]]] = None
        self.imports: list[str] = []
        """The modules the invocation imported (from its audit watch, :mod:`._audit`)."""
        self.hooks = _audit.hooks_added()
        self.loaded = len(sys.modules)
        if in_child:
            return  # a forked child exits after the script: nothing to put back
        self.cwd = os.getcwd()
        self.umask = os.umask(0o022)
        os.umask(self.umask)
        # The CPUs the process may run on: a job's os.sched_setaffinity (or a library that
        # pins its threads) would otherwise carry into every later job (red team, threads).
        self.affinity = _affinity()
        self.environ = dict(os.environ._data)  # type: ignore[attr-defined]  # bytes: no decoding
        self.c_environ = _c_environ()  # os.putenv/unsetenv change it behind os.environ
        self.stdio_config = {
            name: _stream_config(getattr(sys, name)) for name in ("stdin", "stdout", "stderr")
        }
        self.modules = dict(sys.modules)
        self.sys_lists = {name: list(getattr(sys, name)) for name in _SYS_LISTS}
        self.sys_values = {name: getattr(sys, name) for name in _SYS_VALUES if hasattr(sys, name)}
        self.linecache = dict(linecache.cache)  # a cache of files' lines, as a fresh job's
        self.authkey: Optional[bytes] = None
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
        self.exited = False
        if os.getcwd() != script.workdir:  # a shadow: job's folder (put back after direct runs)
            os.chdir(script.workdir)
        real_file = script.temporary_script or temporary_script_path(script)
        if script.source is not None:  # its code runs from the temporary script, as in Snakemake
            self.code = _relocated(script.code, script.script_path, real_file)
            if _write_temporary_script(real_file, script.source):
                self.written = real_file
        sys.path[:] = self.iso.invocation_path(script)
        sys.argv[:] = [real_file]
        sys.orig_argv = [sys.executable, real_file]  # as `python script.py` was started
        # A fresh interpreter raises KeyboardInterrupt on SIGINT (the worker ignores it), and
        # what the script starts inherits that, not SIG_IGN (put back after a direct run).
        if not SIGINT_IGNORED_AT_START:  # nohup, or `snakemake ... &` from a script: ignored
            signal.signal(signal.SIGINT, signal.default_int_handler)
        self.iso.seeds.start(script.template)
        self.iso.names.start(script.template)
        process = sys.modules.get("multiprocessing.process")
        if process is not None:  # a fresh process's multiprocessing key is its own
            self.authkey = process.current_process().authkey
            process.current_process().authkey = os.urandom(32)
        os.environ.update(job_environment(script.snakemake))
        os.environ["PWD"] = script.workdir  # the shell in front of a local job's sets it
        if script.prefix:  # shell() runs it in front of a local script job's interpreter
            apply_prefix(script.prefix)
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
            __loader__=importlib.machinery.SourceFileLoader("__main__", real_file),
            __annotations__={},
            sys=sys,
            pickle=pickle,
            # a fork child's own copy: what the script hangs on it dies with __main__
            snakemake=copy.copy(script.snakemake) if self.in_child else script.snakemake,
            logger=logger,
            Snakemake=Snakemake,
        )
        sys.modules["__main__"] = main
        if not self.in_child:
            atexit.register = self._atexit_register  # type: ignore[assignment]
            atexit.unregister = self._atexit_unregister  # type: ignore[assignment]
        self.namespace = namespace
        # The collector's counters as the last step: where its automatic collections fall in
        # the script (and so the order of __del__ of objects in cycles) is then the same for
        # every job of the script, not set by what the template process did before the job.
        gc.collect()  # the template's objects are frozen: only the job's few are looked at
        return namespace

    def restore_tempdir(self) -> None:
        if self.tempdir is not None:
            tempfile, value = self.tempdir
            tempfile.tempdir = value

    def leave_script(self) -> None:
        """What a fresh interpreter does when the script ends (:mod:`._exit`): join its
        threads, run its exit handlers and the standard library's for what it started
        (pools, child processes, finalizers, log handlers), clear its globals so that its
        objects are finalised and its files flushed and closed."""
        handlers: Optional[list[tuple[Callable[..., Any], tuple[Any, ...], dict[str, Any]]]]
        if self.in_child:
            handlers = None  # the child's atexit list holds only what the invocation registered
        else:
            atexit.register, atexit.unregister = _ATEXIT_REGISTER, _ATEXIT_UNREGISTER
            handlers = list(self.atexit)
            self.atexit.clear()
        # As CPython's _PyRun_SimpleFileObject once the file has run, before the interpreter's
        # exit (not after sys.exit: the interpreter then exits from inside the run).
        if not self.exited:
            for name in ("__file__", "__cached__"):
                self.namespace.pop(name, None)
        if self.in_child:
            teardown = Teardown(
                self._own_modules(),
                self.iso.builtins_names,
                self.iso.sys_names,
                self.iso.template_files,
            )
        else:  # a job's writes to a file the template keeps open reach it, as at a fresh exit
            teardown = Teardown(template_files=self.iso.template_files)
        # A fork child whose script added an audit hook: nothing the hook could see that a
        # fresh exit does not do (no walk of every object for files left open).
        hooked = self.in_child and _audit.hooks_added() != self.hooks
        # A fork child's globals are held by its __main__ module alone from here on.
        namespace, self.namespace = (None if self.in_child else self.namespace), {}
        ended = fresh_exit(self.exit_scope, namespace, handlers, teardown, not hooked)
        self.leftover_threads, self.flush_failed = ended.leftover, ended.flush_failed
        if not self.in_child:  # as Snakemake removes it after the script (fork: the parent)
            _remove_temporary_script(self.written)
        self.written = None

    def _own_modules(self) -> list[types.ModuleType]:
        """The workflow's own modules the script imported (not installed libraries), in the
        order it imported them: a fresh interpreter clears their globals at its exit."""
        found: list[types.ModuleType] = []
        loaded, roots = sys.modules, self.iso.library_roots
        # importlib.import_module() raises no "import" audit event: the newest entries of
        # sys.modules (new modules are added last) name those; only they are read.
        newest = list(itertools.islice(reversed(loaded), max(0, len(loaded) - self.loaded)))
        for name in [*self.imports, *reversed(newest)]:  # no id(): an audit hook sees it
            module = loaded.get(name)
            if type(module) is not types.ModuleType or any(m is module for m in found):
                continue
            if name != "__main__" and not module_is_library(module, roots):
                found.append(module)
        return found

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

    # ---- after ------------------------------------------------------------------------------

    def restore(self) -> list[str]:
        """Put everything back; return what could not be undone (warnings for the job)."""
        notes: list[str] = []
        for stream in (sys.stdout, sys.stderr):
            _flush(stream)
        for name in _SYS_VALUES:
            if name in self.sys_values:
                setattr(sys, name, self.sys_values[name])
            elif hasattr(sys, name):  # set by the job (sys.last_value, sys.ps1): taken away
                delattr(sys, name)
        for name, config in self.stdio_config.items():  # sys.stdout.reconfigure(...)
            stream = getattr(sys, name)
            if config is not None and _stream_config(stream) != config:
                encoding, errors, line_buffering, write_through = config
                try:
                    stream.reconfigure(
                        encoding=encoding,
                        errors=errors,
                        line_buffering=line_buffering,
                        write_through=write_through,
                    )
                except (OSError, ValueError, io.UnsupportedOperation):
                    pass  # stdin after a read: its encoding cannot change (a fresh one's own)
        self.iso.names.end()
        if self.authkey is not None:
            sys.modules["multiprocessing.process"].current_process().authkey = self.authkey
        # linecache never looks at a file again once cached: what the job (its warnings, its
        # tracebacks, its own getline) cached goes, or the next job could read stale lines.
        linecache.cache.clear()
        linecache.cache.update(self.linecache)
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
        _restore_affinity(self.affinity)
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
            self._restore_c_environ()
            return
        decode = os.fsdecode
        for key in [k for k in data if k not in self.environ]:
            del os.environ[decode(key)]
        for key, value in self.environ.items():
            if data.get(key) != value:
                os.environ[decode(key)] = decode(value)
        self._restore_c_environ()
        if hasattr(time, "tzset"):
            time.tzset()

    def _restore_c_environ(self) -> None:
        """What ``os.putenv``/``os.unsetenv`` changed without ``os.environ`` knowing (the
        next job's child processes would inherit it)."""
        now = _c_environ()
        if now == self.c_environ:
            return
        try:
            for key in now.keys() - self.c_environ.keys():
                os.unsetenv(key)
            for key, value in self.c_environ.items():
                if now.get(key) != value:
                    os.putenv(key, value)
        except (OSError, ValueError):
            pass

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


def _stream_config(stream: Any) -> Optional[tuple[Any, ...]]:
    """What ``TextIOWrapper.reconfigure`` can change on a standard stream (None: not one)."""
    if not isinstance(stream, io.TextIOWrapper):
        return None
    return (stream.encoding, stream.errors, stream.line_buffering, stream.write_through)


@functools.cache
def _c_environ_pointer() -> Any:
    """libc's ``environ`` (None where it cannot be found). The variable stays where it is;
    setenv() changes what it points to, which every read follows."""
    try:
        import ctypes

        return ctypes.POINTER(ctypes.c_char_p).in_dll(ctypes.CDLL(None), "environ")
    except (OSError, ValueError, AttributeError):
        return None


def _c_environ() -> dict[bytes, bytes]:
    """The C library's environment (what child processes inherit), on Linux and macOS."""
    found: dict[bytes, bytes] = {}
    entries = _c_environ_pointer()
    if entries is None:
        return found
    i = 0
    while entries[i] is not None:
        key, _, value = entries[i].partition(b"=")
        found[key] = value
        i += 1
    return found


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


def job_threads(snakemake: Any, torch_too: bool = True) -> None:
    """A fork child of a template that loaded torch or a BLAS: their thread pools are sized
    as a fresh job would size them from its ``OMP_NUM_THREADS`` (the job's ``threads``), not
    as the worker's environment sized them (1). ``torch_too`` False: the template sized
    torch's pool itself, and a fresh job's torch keeps that size."""
    threads = getattr(snakemake, "threads", None)
    if not isinstance(threads, int) or threads < 1:
        return
    torch = sys.modules.get("torch") if torch_too else None
    if torch is not None:
        try:
            if torch.get_num_threads() != threads:
                torch.set_num_threads(threads)
        except Exception:
            pass
    if threads > 1 and "numpy" in sys.modules:
        try:
            import threadpoolctl  # type: ignore[import-untyped]

            threadpoolctl.threadpool_limits(limits=threads, user_api="blas")
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
