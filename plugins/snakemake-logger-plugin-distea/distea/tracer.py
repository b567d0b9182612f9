"""Record what one process did, for post-hoc impact analysis: functions, messages, file reads.

Opt-in and cheap. Only the workflow's own code is traced (files under ``root``, by default
the working directory, minus ``.snakemake/``, virtual environments and site-packages), and
for each function only its *first entry and last return per epoch* are kept (EAS: Apiwattanapong
et al., ICSE'05), so memory grows with functions x messages, not with calls. An epoch ends at
every message sent or received; together with per-message logs that is enough to compute exact
happens-before offline.

The clock is a per-process Lamport clock: +1 per recorded event, ``max(own, sender) + 1`` on
receipt. Messages, file reads, parameter reads and template builds are written to the log as
they happen (they survive a killed process); function records are written by :meth:`dump`
(at exit, on SIGTERM, or explicitly by a worker before it ``os._exit``\\ s).

Mechanisms (``$DISTEA_TRACE_MODE`` overrides the default):

* ``monitoring`` (default on 3.12+): ``sys.monitoring``; a code object outside the workflow is
  DISABLEd after its first event, so foreign code costs nothing afterwards. A workflow
  function's event is DISABLEd too when it fires again while recording it could not change
  the record (an entry of a function in the epoch, a return that would store the clock
  already stored), and every clock change re-enables those (:meth:`ProcessTrace._unmute`),
  and only those: a hot function costs nothing between clock changes.
* ``instrument`` (default on 3.11; ``wrap`` is an old name for it): the workflow's functions
  record themselves. An import hook compiles the workflow's modules with rewritten function
  bodies (:mod:`distea._instrument`), functions that already exist when tracing starts get
  the rewritten code objects, and the running script body is recorded as ``<module>``. The
  function objects themselves record, so every call is seen however it is reached (dispatch
  tables, callbacks, ``functools.partial``, decorators' closures, references taken before
  tracing). On 3.11 *any* ``sys.settrace``/``sys.setprofile`` function switches the whole
  interpreter to its slow, unspecialised tracing path (measured: 1.7x on a compute loop with
  a no-op trace function), so code-level recording is the only way to stay cheap. Functions
  defined in a script run by ``script:`` exist before the tracer can rewrite them:
  :mod:`distea.autotrace` runs the rest of the script instrumented, and a sticky worker
  compiles the script itself; elsewhere a query naming one falls back to its enclosing
  script body (conservative).
* ``settrace``: ``sys.settrace`` with line events off per frame; every function, at the 3.11
  price. Forced by ``$DISTEA_DIGESTS`` (the benchmark's ground-truth runs).
"""

import atexit
import functools
import importlib.machinery
import json
import os
import re
import signal
import stat as stat_module
import sys
import threading
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from types import CodeType, FrameType, FunctionType, MethodType, ModuleType
from typing import Any, Optional

from . import _config, _instrument
from ._schema import header, job_key

ENV_DIR = "DISTEA_TRACE"
"""Directory to write traces to; tracing is off when unset."""
ENV_ROOT = "DISTEA_TRACE_ROOT"
"""Only code under this directory is traced (default: the working directory)."""
ENV_MODE = "DISTEA_TRACE_MODE"
"""``wrap``, ``settrace`` or ``monitoring`` (default: monitoring on 3.12+, else wrap)."""
ENV_DIGESTS = "DISTEA_DIGESTS"
"""When "1", also digest every traced call's arguments and return value (ground truth runs)."""

ENV_JOB = "DISTEA_JOB"
"""The job a Python process started by a job serves: set by the tracer for the processes a
traced job starts (and by Snakemake's traced process for the commands of its jobs); the
start-up hook traces a process only where it is set."""
ENV_PARENT = "DISTEA_PARENT"
"""The traced process that started this one (its trace name)."""
ENV_PARENT_CLOCK = "DISTEA_PARENT_CLOCK"
"""The parent's clock when it started this process (absent: unknown, the analysis then uses
the parent's last clock for that job, which over-approximates)."""
HOOK_FOLDER = ".hook"
"""Under the trace folder: the ``sitecustomize.py`` that traces child Python processes."""

COMPLETE_MODES = frozenset({"settrace", "monitoring", "instrument"})
"""Tracer mechanisms that see every call of a workflow function, however it is reached."""

_REAL_STAT = os.stat
"""``os.stat`` before the watch (:func:`_install_stat_watch`): DISTEA's own checks."""


def _kind(path: str) -> int:
    """The mode bits of ``path`` (0 when it does not exist), read without being logged."""
    try:
        return _REAL_STAT(path).st_mode
    except (OSError, ValueError):
        return 0


_EXCLUDED_PARTS = ("site-packages", "dist-packages", "/.venv/", "/.snakemake/", "/venv/")
_ADDRESS = re.compile(r" at 0x[0-9a-f]+")
_OWN_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


class ProcessTrace:
    """The trace of one process: its clock, its live log and its function table."""

    # Whether the global random generators carry over from one request to the next. A sticky
    # worker reseeds them from the OS after every invocation, as a fresh process would be, so
    # they carry nothing there (see snakemake_executor_plugin_sticky._isolation).
    carries_rng = True

    # Monitoring mode DISABLEs a workflow function's events while recording them again would
    # not change the record (see _start_monitoring); False keeps every event (the reference
    # the differential test compares with).
    mute_monitoring = True

    def __init__(
        self,
        directory: "str | os.PathLike[str]",
        role: str,
        *,
        root: "str | os.PathLike[str] | None" = None,
        name: Optional[str] = None,
        job: Optional[str] = None,
        digests: bool = False,
        **extra: Any,
    ) -> None:
        self.directory = os.path.abspath(os.fspath(directory))
        os.makedirs(self.directory, exist_ok=True)
        self.root = os.path.abspath(root or os.getcwd())
        marker = os.sep + os.path.join(".snakemake", "shadow") + os.sep
        self.shadow: Optional[str] = None
        """A job run in a shadow directory (``shadow:``): its paths are the workflow's."""
        if marker in self.root + os.sep:
            self.shadow = self.root
            self.root = self.root[: (self.root + os.sep).index(marker)]
        host, pid = os.uname().nodename, os.getpid()
        self.pid = pid
        self.host = host
        self.name = name or f"{role}:{host}:{pid}"
        self.role = role
        self.job = job
        self.digests = digests
        self.clock = 0
        self._lock = threading.RLock()
        # Keys are code objects, or ("span", file, name) for bodies recorded by span().
        self._epoch: dict[Any, list[int]] = {}
        self._closed: list[dict[Any, list[int]]] = []
        self._wanted: dict[Any, bool] = {}
        self._names: dict[Any, str] = {}
        self._aliases: dict[str, str] = {}
        self._opened: set[str] = set()
        self._params: set[tuple[str, str]] = set()
        self._digest: dict[tuple[CodeType, str], list[Any]] = {}
        self._muted: dict[CodeType, None] = {}
        """Workflow code with events DISABLEd since the clock last changed (monitoring)."""
        self._changing = 0
        """Clock changes under way (between _unmute() and its ``-= 1``): nothing mutes."""
        self._dumped = False
        self._functions_on = False
        self.workflow_code_reads_only = bool(extra.pop("workflow_code_reads_only", False))
        """Record a file read only when workflow code is on the stack (Snakemake's process)."""
        self._in_context = threading.local()
        self._outside = 0
        self._code_epochs = 0
        """Epochs closed with workflow code in them (a context ran code if this grew)."""
        self._instrumented_files: set[str] = set()
        self._fed: dict[tuple[str, bool], int] = {}
        """Latest feed written per (job, to_end): an earlier feed adds no reachability."""
        self._config_seen: set[tuple[str, str, int]] = set()
        self._last_tick = 0
        self.snakefile_rules: Any = tuple
        """Snakemake's process: the workflow's rules (set by :mod:`distea._snakemake`)."""
        self.snakefile_globals: Optional[tuple[dict[str, Any], frozenset[str]]] = None
        """Snakemake's process: the Snakefile's globals and the names Snakemake put there
        (set by :mod:`distea._snakemake`); its state is then noted per job context."""
        self.from_hook = bool(extra.pop("from_hook", False))
        """Started by the child-process hook (a script's autotrace may still take it over)."""
        self._open_log(extra)

    def _open_log(self, extra: dict[str, Any]) -> None:
        name = f"{self.role}-{self.host}-{self.pid}-{os.urandom(3).hex()}.jsonl"
        path = os.path.join(self.directory, name)
        self.path = path
        self._out = open(path, "w", encoding="utf-8", buffering=1)
        self._write(
            header(
                "tracer", self.name, role=self.role, host=self.host, pid=self.pid, job=self.job,
                **extra,
            )
        )  # fmt: skip

    # ------------------------------------------------------------------ child processes
    def spawn_point(self) -> int:
        """This process is about to fork: the clock the child starts after."""
        return self.note_spawn(["<fork>"])

    def note_spawn(self, argv: Any, job: Optional[str] = None) -> int:
        """Log that this process starts a program (``argv``); return the clock of the start.

        The analysis counts, per job, the Python programs started against the traced child
        processes that name this one as their parent: a Python child without a trace (another
        interpreter, ``-I``/``-S``, an explicit environment without the tracing variables)
        is then warned about by job name.
        """
        if isinstance(argv, (str, bytes, os.PathLike)):
            argv = [argv]
        words = [os.fsdecode(a) if isinstance(a, (bytes, os.PathLike)) else str(a) for a in argv]
        with self._lock:
            clock = self._tick_epoch()
            record = {"k": "spawn", "c": clock, "job": job or self.job, "argv": words[:8]}
            if words and _python_script(words[0]):
                record["python"] = True  # a script run through its #! line
            self._write(record)
            return clock

    def child_environment(
        self, env: "Optional[MutableMapping[Any, Any]]", clock: int, job: Optional[str] = None
    ) -> None:
        """Name this process, its clock and its job in the environment a child starts with
        (``env``, or this process's own when None: the child inherits it)."""
        target: Any = os.environ if env is None else env
        byte_keys = env is not None and any(isinstance(k, bytes) for k in env)
        for key, value in (
            (ENV_PARENT, self.name), (ENV_PARENT_CLOCK, str(clock)),
            (ENV_JOB, job or self.job or ""),
            (ENV_DIR, str(self.directory)), ("PYTHONPATH", _hooked_pythonpath(self, env)),
        ):  # fmt: skip
            if byte_keys:
                target[key.encode()] = value.encode()
            else:
                target[key] = value

    def take_over(
        self, role: str, job: Optional[str], name: Optional[str] = None, **extra: Any
    ) -> None:
        """A process the start-up hook traced as a job's program turns out to be a script that
        traces itself (``import distea.autotrace``): it is logged as that role from here, its
        records so far kept (its log is rewritten under the new name)."""
        with self._lock, _termination_deferred():
            self._out.flush()
            old = self.path
            with open(old, encoding="utf-8") as f:
                lines = f.read().splitlines(keepends=True)
            head = json.loads(lines[0]) if lines else {}
            self.role = role
            self.job = job if role != "script" else job or self.job
            self.name = name or f"{role}:{self.host}:{self.pid}"
            self.from_hook = False
            kept = ("parent", "parent_clock", "argv")
            extra = {**{k: v for k, v in head.items() if k in kept}, **extra}
            self._out.close()
            self._open_log(extra)
            for line in lines[1:]:
                self._out.write(line)
            os.unlink(old)
            os.environ[ENV_PARENT] = self.name
            os.environ[ENV_JOB] = self.job or ""
        if getattr(self, "mode", "") == "instrument":
            self._enter_running(sys._getframe(1))  # the script body, as a fresh start would

    def _enter_running(self, frame: Optional[FrameType]) -> None:
        """Record the workflow code running on this stack (a script's module body) as entered:
        it started before this tracer could rewrite it (instrument mode)."""
        while frame is not None:
            code = frame.f_code
            ok = self._wanted.get(code)
            if ok is None:
                ok = self._decide(code)
            if ok:
                self._enter(code)
                self._bodies.append(code)
            frame = frame.f_back

    def become_child(self, parent: str, parent_clock: int) -> None:
        """In a child forked from this traced process: start a trace of its own (its own
        log, records and lock), whose start happens after the parent's fork point."""
        with _termination_deferred():
            self._become_child(parent, parent_clock)

    def _become_child(self, parent: str, parent_clock: int) -> None:
        self._lock = threading.RLock()
        self._in_context = threading.local()
        self.pid = os.getpid()
        self.role = "child"
        self.name = f"child:{self.host}:{self.pid}"
        self._epoch.clear()  # in place: instrumented code holds it
        self._closed = []
        self._opened = set()
        self._params = set()
        self._digest = {}
        self._fed = {}
        self._muted = {}
        self._config_seen = set()
        self._dumped = False
        self.from_hook = False
        self._open_log({"parent": parent, "parent_clock": parent_clock, "forked": True})
        os.environ[ENV_PARENT] = self.name
        os.environ[ENV_JOB] = self.job or ""

    # ------------------------------------------------------------------ live records
    def _write(self, record: dict[str, Any]) -> None:
        self._out.write(json.dumps(record, separators=(",", ":")) + "\n")

    def _event(self, record: dict[str, Any]) -> None:
        """Log an event that takes a clock tick of its own (``c``, set here), under the lock."""
        self._unmute()
        self.clock = clock = self.clock + 1
        self._changing -= 1
        self._write({**record, "c": clock})

    def _unmute(self) -> None:
        """The clock is about to change: the events monitoring mode DISABLEd must fire again.

        An entry is DISABLEd only while its function is in the epoch and a return only while
        its stored clock is the current one; both may stop holding when the clock moves.
        Call before every change of ``clock``, and ``self._changing -= 1`` after it: in
        between, no callback mutes. Re-enabling *before* the change matters with threads: a
        muted call that another thread makes before the re-enabling is a no-op at the old
        clock, while one made after the change would be lost. The swap below runs with no
        switch to another thread in between (see _muting_callbacks).
        """
        self._changing += 1
        muted = self._muted
        if muted:
            self._muted = {}
            self._rearm(muted)

    @staticmethod
    def _rearm(codes: dict[CodeType, None]) -> None:
        """Re-enable the DISABLEd recording events of ``codes`` (set in monitoring mode)."""

    def _tick_epoch(self, sender_clock: int = 0) -> int:
        """Advance the clock at a communication event, closing the current epoch (past
        ``sender_clock`` at a receipt: the Lamport rule)."""
        self._unmute()
        # The value set, not self.clock read again: another thread's first entry may have
        # moved it since (that entry is in the new epoch, after this event).
        self.clock = clock = max(self.clock, sender_clock) + 1
        self._last_tick = clock
        if self._epoch:
            # The epoch dict stays the same object: instrumented code holds it (via builtins).
            self._code_epochs += 1
            self._closed.append(self._epoch.copy())
            self._epoch.clear()
        self._changing -= 1
        return clock

    def send(self, message_id: str, to: str, job: Optional[str] = None) -> int:
        """Log a message about to be sent; return the clock to piggyback on it."""
        with self._lock:
            clock = self._tick_epoch()
            self._write({"k": "send", "m": message_id, "c": clock, "to": to, "job": job})
            return clock

    def recv(
        self, message_id: str, sender_clock: int, sender: str, job: Optional[str] = None
    ) -> int:
        """Log a received message; the Lamport rule moves this clock past the sender's."""
        with self._lock:
            clock = self._tick_epoch(int(sender_clock))
            self._write({"k": "recv", "m": message_id, "c": clock, "from": sender, "job": job})
            return clock

    def note_template(self, name: str) -> None:
        """A sticky template's state starts building here (the source of a template change)."""
        with self._lock:
            self._event({"k": "tmpl", "n": name})

    def note_state(self, job: Optional[str], written: Optional[bool], evidence: str) -> None:
        """Whether the carried state of this (sticky worker) process changed while serving
        ``job``: the evidence that a change can, or cannot, reach the next job it serves."""
        with self._lock:
            self._event({"k": "state", "job": job, "w": written, "e": evidence})

    def check_state(self, job: Optional[str], states: dict[str, Any]) -> None:
        """After a sticky worker served ``job``: note whether its carried state changed.

        The carried state is every template state, the globals of the workflow's modules and,
        where ``carries_rng``, the global random generators (``random``, ``numpy.random``). A
        digest is compared with the one taken after the previous request, or after a template
        build in this one.
        """
        digest = self._state_digest_now(self._state_roots(states))
        previous = getattr(self, "_state_digest", None)
        self._state_digest = digest
        if digest is None or previous is None:
            self.note_state(
                job, None, "the carried state could not be digested (counts as changed)"
            )
        elif digest != previous:
            self.note_state(job, True, "the carried state's digest changed while serving it")
        else:
            self.note_state(job, False, "the carried state's digest did not change")

    def state_built(self, template: str, states: dict[str, Any]) -> None:
        """A template's state was just built (a write of the carried state, at this clock)."""
        self.note_state(self.job, True, f"template {template}'s state was built")
        self._state_digest = self._state_digest_now(self._state_roots(states))

    def begin_state(self, states: dict[str, Any]) -> None:
        """Digest the carried state once before a worker's first request."""
        if not hasattr(self, "_state_digest"):
            self._state_digest = self._state_digest_now(self._state_roots(states))

    def _state_roots(self, states: dict[str, Any]) -> dict[str, Any]:
        roots: dict[str, Any] = {f"template:{k}": v for k, v in states.items()}
        for module in self.workflow_modules():
            values = {
                k: v
                for k, v in vars(module).items()
                if not k.startswith("__") and not isinstance(v, ModuleType)
            }
            roots[f"module:{module.__name__}"] = values
        if not self.carries_rng:
            return roots
        import random

        roots["random"] = random.getstate()
        numpy = sys.modules.get("numpy")
        if numpy is not None:
            try:
                roots["numpy.random"] = numpy.random.get_state()
            except Exception:
                pass
        return roots

    def workflow_modules(self) -> list[ModuleType]:
        """The workflow's own modules loaded in this process (their globals carry state)."""
        root = self.root + os.sep
        out = []
        for module in list(sys.modules.values()):
            filename = getattr(module, "__file__", None)
            if not filename:
                continue
            full = os.path.abspath(filename)
            if full.startswith(root) and not any(p in full for p in _EXCLUDED_PARTS):
                out.append(module)
        return out

    def note_param(self, name: str, job: Optional[str]) -> None:
        with self._lock:
            if (name, job or "") in self._params:
                return
            self._params.add((name, job or ""))
            self._event({"k": "param", "n": name, "job": job})

    def note_config(self, path: str) -> None:
        """Code read config key ``path`` (dotted; ``model.*``: the whole ``model`` mapping)."""
        with self._lock:
            key = (path, self.job or "", self._last_tick)
            if key in self._config_seen:
                return
            self._config_seen.add(key)
            self._code_epochs += 1  # a read inside a job's context feeds the job from here
            self._event({"k": "cfg", "n": path, "job": self.job})

    def note_configfile(self, path: str, keys: dict[str, str]) -> None:
        """Snakemake loaded a config file: its leaf keys and their value digests (a later
        change of the file is mapped to the keys that changed)."""
        full = os.path.abspath(path)
        shown = full[len(self.root) + 1 :] if full.startswith(self.root + os.sep) else full
        with self._lock:
            self._write({"k": "cfgfile", "p": shown, "c": self.clock, "keys": keys})

    # ------------------------------------------------------------------ job contexts
    def begin_context(self) -> Optional[tuple[int, int]]:
        """Snakemake's process starts computing something for one job (its input, params...).

        Returns a token for :meth:`end_context` (None inside another context of this thread:
        the outer one owns what runs). The clock ticks, so the context's function records are
        its own (unless another thread runs workflow code at the same time).
        """
        depth = getattr(self._in_context, "depth", 0)
        self._in_context.depth = depth + 1
        if depth:
            return None
        with self._lock:
            if self._epoch:  # workflow code ran outside any job context since the last one
                self._outside = self.clock
                if self.snakefile_globals is not None:
                    self._note_dag_state(None, "workflow code outside any job's context")
            if self.snakefile_globals is not None:
                # Contexts are cut apart (state evidence): each logs its own first reads, as a
                # worker's requests do (a file written in one and read in another).
                self._opened.clear()
            return self._tick_epoch(), self._code_epochs

    def end_context(
        self,
        token: Optional[tuple[int, int]],
        job: Optional[str],
        to_end: bool = False,
        inputs: bool = False,
    ) -> None:
        """Close a context; a ``ctx`` record says which job it served and what fed that job.

        ``f`` (feed) is the clock from which the process's history flows into the job: the
        end of the context when workflow code ran during it (that code may have read any
        state the process built before), else the last clock at which workflow code ran
        outside any job context (what a context without code depends on: the Snakefile's
        top level, config). Normally the feed reaches the job's start (its input and params);
        with ``to_end`` (the job's ``run:`` code itself ran here) its end. With ``inputs``
        (the context expanded the job's input) and workflow code having run in it, the record
        says so (``"w": "input"``): that code decided which jobs produce the job's inputs.
        """
        self._in_context.depth -= 1
        if token is None:
            return
        start, code_epochs = token
        with self._lock:
            end = self._tick_epoch()
            if job is not None:
                ran = self._code_epochs > code_epochs
                feed = end if ran else self._outside
                if not ran and self._fed.get((job, to_end), -1) >= feed:
                    return  # nothing to attribute, and a later feed was already written
                self._fed[(job, to_end)] = max(feed, self._fed.get((job, to_end), -1))
                record = {"k": "ctx", "job": job, "c": [start, end], "f": feed}
                if to_end:
                    record["to"] = "end"
                if inputs and ran:
                    record["w"] = "input"
                self._write(record)
                if ran and self.snakefile_globals is not None:
                    self._note_dag_state(job, f"computing for {job}")

    def _note_dag_state(self, job: Optional[str], during: str) -> None:
        """Snakemake's process: whether the workflow's state (its modules' globals, the
        Snakefile's own globals and config) changed since the last note, as evidence that a
        change reaching one job's computation does, or does not, carry to later jobs'."""
        digest = self._state_digest_now(self._dag_state_roots())
        previous = getattr(self, "_state_digest", None)
        self._state_digest = digest
        if digest is None or previous is None:
            self.note_state(job, None, f"{during}: the state could not be compared")
        elif digest != previous:
            self.note_state(job, True, f"{during} changed the workflow's state")
        else:
            self.note_state(job, False, f"{during} left the workflow's state unchanged")

    def _dag_state_roots(self) -> dict[str, Any]:
        roots = self._state_roots({})
        names, vanilla = self.snakefile_globals or ({}, frozenset())
        roots["snakefile"] = {
            k: v
            for k, v in dict.items(names)
            if (k not in vanilla or k == "config")
            and not k.startswith("__")
            and not isinstance(v, ModuleType)
            and not type(v).__module__.startswith("snakemake")
        }
        # What the rules hold: input functions, params and resources callables (a memo in a
        # closure made by a factory: ``params: v=make_lookup("table.tsv")``).
        held: dict[str, Any] = {}
        for rule in list(self.snakefile_rules()):
            try:
                held[str(rule.name)] = (
                    list(rule.input), list(rule.params), dict(rule.resources or {}),
                )  # fmt: skip
            except Exception:  # an unusual rule: its callables are unknown
                held[str(rule.name)] = None
        roots["rules"] = held
        return roots

    def _state_digest_now(self, roots: dict[str, Any]) -> Optional[str]:
        modules = {m.__name__ for m in self.workflow_modules()}
        if self.snakefile_globals is not None:  # the Snakefile's classes
            modules.add(str(self.snakefile_globals[0].get("__name__")))
        return StateFingerprint(classes=frozenset(modules)).digest(roots)

    def note_open(self, path: str) -> None:
        """First read of a data file in this process (file write -> read edges land here)."""
        with self._lock:
            if path in self._opened:
                return
            self._opened.add(path)
            self._event({"k": "open", "p": path})

    def note_write(self, path: str) -> None:
        """First write of a file in this process (per request for a worker): a file a job
        writes without declaring it (a cache, a side file) is an edge to its later readers."""
        with self._lock:
            key = "\0w:" + path
            if key in self._opened:
                return
            self._opened.add(key)
            self._event({"k": "write", "p": path, "job": self.job})

    # ------------------------------------------------------------------ functions
    def alias(self, real_file: str, shown_file: str) -> None:
        """Report code of ``real_file`` under ``shown_file`` (Snakemake's temporary script)."""
        self._aliases[os.path.abspath(real_file)] = os.path.abspath(shown_file)

    def _decide(self, code: CodeType) -> bool:
        filename = self.workflow_path(os.path.abspath(code.co_filename))
        filename = self._aliases.get(filename, filename)
        wanted = (
            filename.startswith(self.root + os.sep)
            and not any(part in filename for part in _EXCLUDED_PARTS)
            and not code.co_filename.startswith("<")
            and not filename.startswith(_OWN_DIR)
            and not filename.startswith(self.directory + os.sep)
        )
        if wanted:
            module = os.path.relpath(filename, self.root)
            module = module[:-3] if module.endswith(".py") else module
            self._names[code] = module.replace(os.sep, ".") + "." + code.co_qualname
        self._wanted[code] = wanted
        return wanted

    def _first(self, code: Any) -> list[int]:
        """First entry in this epoch: the only function event that advances the clock.

        A later return only records the current clock: EAS needs ``last(m) >= first(c)``
        exactly when m returned after c first started, and c's first entry took a fresh
        clock value, so returns need no tick of their own (and the hot path stays cheap).
        """
        self._unmute()
        self.clock = clock = self.clock + 1
        span = self._epoch[code] = [clock, clock]
        self._changing -= 1
        return span

    def _enter(self, code: Any) -> None:
        if code not in self._epoch:
            self._first(code)

    def _leave(self, code: Any) -> None:
        span = self._epoch.get(code)
        if span is None:
            self._first(code)
        else:
            span[1] = self.clock

    def _digest_call(self, code: CodeType, frame: FrameType) -> None:
        job = self.job or ""
        import hashlib

        slot = self._digest.setdefault((code, job), [0, hashlib.blake2b(digest_size=16)])
        slot[0] += 1
        args = {k: frame.f_locals.get(k) for k in code.co_varnames[: code.co_argcount]}
        slot[1].update(_stable(args).encode())

    def _digest_return(self, code: CodeType, value: Any) -> None:
        slot = self._digest.get((code, self.job or ""))
        if slot is not None:
            slot[1].update(b"->" + _stable(value).encode())

    def start_functions(self) -> None:
        """Start recording the workflow's own functions in every thread of this process."""
        if self._functions_on:
            return
        self._functions_on = True
        self.mode = self._choose_mode()
        if self.mode == "monitoring":
            try:
                self._start_monitoring()
                return
            except ValueError:  # the profiler slot is taken (a profiler, coverage): instrument
                self.mode = "instrument"
        if self.mode == "instrument":
            self._start_instrumenting()
            return
        wanted, decide, enter, leave = self._wanted, self._decide, self._enter, self._leave
        digests = self.digests

        def local(frame: FrameType, event: str, arg: Any) -> Any:
            if event == "return":
                leave(frame.f_code)
                if digests:
                    self._digest_return(frame.f_code, arg)
            return local

        def call(frame: FrameType, event: str, arg: Any) -> Any:
            if event != "call":
                return None
            code = frame.f_code
            ok = wanted.get(code)
            if ok is None:
                ok = decide(code)
            if not ok:
                return None
            enter(code)
            if digests:
                self._digest_call(code, frame)
            frame.f_trace_lines = False
            return local

        # Frames already running (a script's module body) are entered now and traced to return.
        frame: Optional[FrameType] = sys._getframe(1)
        running = []
        while frame is not None:
            running.append(frame)
            frame = frame.f_back
        sys.settrace(call)
        threading.settrace(call)
        for frame in reversed(running):
            code = frame.f_code
            ok = wanted.get(code)
            if ok is None:
                ok = decide(code)
            if ok:
                enter(code)
                frame.f_trace_lines = False
                frame.f_trace = local

    def _choose_mode(self) -> str:
        if self.digests:
            return "settrace"
        wanted = os.environ.get(ENV_MODE, "")
        if wanted == "monitoring" and not hasattr(sys, "monitoring"):
            wanted = ""
        if wanted == "wrap":  # the name of the 3.11 default before code-level instrumentation
            wanted = "instrument"
        if wanted in ("instrument", "settrace", "monitoring"):
            return wanted
        return "monitoring" if hasattr(sys, "monitoring") else "instrument"

    # ---- instrument mode (3.11 default) -------------------------------------------------
    def _start_instrumenting(self) -> None:
        import builtins

        names = {
            _instrument.EPOCH: self._epoch,
            _instrument.FIRST: self._first,
            _instrument.TRACE: self,
        }
        for name, obj in names.items():
            setattr(builtins, name, obj)
        self._finder = _InstrumentingFinder(self)
        sys.meta_path.insert(0, self._finder)
        self.instrument_loaded()
        self._bodies: list[Any] = []
        self._enter_running(sys._getframe(2))

    def workflow_path(self, full: str) -> str:
        """An absolute path as the workflow knows it (a shadow directory's path mapped back)."""
        shadow = self.shadow
        if shadow is not None and full.startswith(shadow + os.sep):
            return os.path.join(self.root, full[len(shadow) + 1 :])
        return full

    def wanted_file(self, filename: str) -> bool:
        """Is ``filename`` workflow code (under the root, not a library, not DISTEA itself,
        not the trace folder's start-up hook)?"""
        full = self.workflow_path(os.path.abspath(filename))
        full = self._aliases.get(full, full)
        return (
            full.startswith(self.root + os.sep)
            and not any(part in full for part in _EXCLUDED_PARTS)
            and not full.startswith(_OWN_DIR)
            and not full.startswith(self.directory + os.sep)
        )

    def module_name(self, filename: str) -> str:
        """Report name of a workflow file: its path from the root, dotted, without ``.py``."""
        full = self.workflow_path(os.path.abspath(filename))
        full = self._aliases.get(full, full)
        return _instrument.module_name(os.path.relpath(full, self.root))

    def compile(
        self,
        source: "str | bytes",
        filename: str,
        body: bool = False,
        keep: tuple[str, ...] = (),
    ) -> CodeType:
        """Compile workflow code so that its functions record themselves (instrument mode).

        Anything else (another mode, a file outside the workflow, source that does not parse
        as Python) is compiled exactly as :func:`compile` would. With ``body``, the module
        body is recorded too (a Snakefile, whose execution nothing else brackets).
        Module-level functions named with a prefix in ``keep`` are compiled as written.
        """
        if (
            getattr(self, "mode", "") != "instrument"
            or self._dumped
            or not self.wanted_file(filename)
        ):
            return compile(source, filename, "exec", dont_inherit=True)
        module = self.module_name(filename)
        self._instrumented_files.add(os.path.abspath(filename))
        try:
            return _instrument.compile_instrumented(
                source, filename, module, f"{module}.<module>" if body else None, keep
            )
        except (SyntaxError, ValueError):  # let compile() report it the usual way
            return compile(source, filename, "exec", dont_inherit=True)

    def instrument_loaded(self) -> None:
        """Give functions that already exist recording code: those of workflow modules imported
        before tracing started, or loaded around the import system since (a sticky templates
        file). Instrument mode only; modules compiled instrumented are skipped.

        Replacing ``__code__`` changes the function objects themselves, so references taken
        earlier (dispatch tables, callbacks, partials, decorators' closures) record too.
        """
        if getattr(self, "mode", "") != "instrument":
            return
        pairs: dict[CodeType, CodeType] = {}
        for module in list(sys.modules.values()):
            filename = getattr(module, "__file__", None)
            if not filename or not filename.endswith(".py") or not self.wanted_file(filename):
                continue
            if os.path.abspath(filename) in self._instrumented_files:
                continue
            self._instrumented_files.add(os.path.abspath(filename))
            try:
                with open(filename, "rb") as f:
                    source = f.read()
                # The functions' code came from the module's own compilation: the same
                # file name and flags give equal code objects to map from.
                code_file = getattr(getattr(module, "__spec__", None), "origin", None) or filename
                plain = compile(source, code_file, "exec", dont_inherit=True)
                instrumented = _instrument.compile_instrumented(
                    source, code_file, self.module_name(filename)
                )
            except (OSError, SyntaxError, ValueError):
                continue
            pairs.update(_instrument.code_pairs(plain, instrumented))
        if not pairs:
            return
        import gc

        for obj in gc.get_objects():
            if type(obj) is FunctionType:
                new = pairs.get(obj.__code__)
                if new is not None:
                    obj.__code__ = new

    @contextmanager
    def span(self, filename: str, qualname: str = "<module>") -> Iterator[None]:
        """Record a body the tracer cannot see by itself (a module body, a worker's script)."""
        key = ("span", os.path.abspath(filename), qualname)
        if key not in self._names:
            module = os.path.relpath(os.path.abspath(filename), self.root)
            module = module[:-3] if module.endswith(".py") else module
            self._names[key] = module.replace(os.sep, ".") + "." + qualname
            self._wanted[key] = True
        self._enter(key)
        try:
            yield
        finally:
            self._leave(key)

    def _start_monitoring(self) -> None:  # pragma: no cover - Python 3.12+ only
        mon = sys.monitoring  # type: ignore[attr-defined]
        tool = mon.PROFILER_ID
        mon.use_tool_id(tool, "distea")
        wanted, decide, enter, leave = self._wanted, self._decide, self._enter, self._leave
        disable = mon.DISABLE

        def start(code: CodeType, offset: int) -> Any:
            ok = wanted.get(code)
            if ok is None:
                ok = decide(code)
            if not ok:
                return disable
            enter(code)
            return None

        def finish(code: CodeType, offset: int, value: Any) -> Any:
            if not wanted.get(code):
                return disable
            leave(code)
            return None

        events = mon.events
        recording = events.PY_START | events.PY_RESUME | events.PY_RETURN | events.PY_YIELD
        arm: Any = None
        muting = self._muting_callbacks(mon, recording) if self.mute_monitoring else None
        if muting is not None:  # else every event fires (no second tool id was free)
            start, finish, arm = muting
        mon.register_callback(tool, events.PY_START, start)
        mon.register_callback(tool, events.PY_RESUME, start)
        mon.register_callback(tool, events.PY_RETURN, finish)
        mon.register_callback(tool, events.PY_YIELD, finish)
        mon.set_events(tool, recording)
        self._monitoring_tool = tool
        frame: Optional[FrameType] = sys._getframe(2)
        while frame is not None:
            ok = wanted.get(frame.f_code)
            if ok is None and decide(frame.f_code):
                enter(frame.f_code)
                if arm is not None:
                    arm(frame.f_code)
            frame = frame.f_back

    def _muting_callbacks(  # pragma: no cover - Python 3.12+ only
        self, mon: Any, recording: int
    ) -> Optional[tuple[Any, Any, Any]]:
        """The global callbacks of muting monitoring mode (they only find the workflow's code)
        and ``arm``, which gives a workflow code object the local events that record it; None
        when no second tool id is free.

        Two tools. The profiler tool's global events see every code object at each of its
        locations once: foreign code is DISABLEd for good; workflow code is recorded, gets
        the recording tool's local events, and is DISABLEd there for the profiler tool too.
        The recording tool's callbacks DISABLE an event when it fires again while recording
        it could not change the record: an entry of a function already in the epoch, a
        return that would store the clock its span already holds (it fired at this clock
        already: a function called once per clock value never pays for muting). _unmute()
        re-enables exactly those code objects before the next clock change; sys.monitoring's
        restart_events() would re-enable every DISABLEd location, foreign code's too, at a
        cost per clock change that grows with all the code the process runs.

        Threads: from the membership test to the return, a muting callback runs only
        instructions at which CPython never switches threads (no call, no backward jump),
        so no clock change (nor _unmute()'s swap of the table) falls between what it reads
        and what it DISABLEs, and it mutes nothing while a clock change is under way
        (``_changing``). _rearm() switches each code object's events off and on again
        (which re-enables its DISABLEd ones) from one C-level loop, so no other thread runs
        that code in between.
        """
        import collections
        import itertools

        local = next((i for i in (3, 4) if mon.get_tool(i) is None), None)
        if local is None:
            return None
        mon.use_tool_id(local, "distea-recording")
        set_local = mon.set_local_events
        wanted, decide, enter, leave = self._wanted, self._decide, self._enter, self._leave
        epoch, first, trace, disable = self._epoch, self._first, self, mon.DISABLE
        armed: dict[CodeType, None] = {}

        def arm(code: CodeType) -> None:
            armed[code] = None
            set_local(local, code, recording)

        def find_start(code: CodeType, offset: int) -> Any:
            ok = wanted.get(code)
            if ok is None:
                ok = decide(code)
            if ok:
                arm(code)
                enter(code)  # the recording tool may not see this event (recording twice is
            return disable  # harmless: an entry and a store of the clock are idempotent)

        def find_finish(code: CodeType, offset: int, value: Any) -> Any:
            ok = wanted.get(code)
            if ok is None:
                ok = decide(code)
            if ok:
                arm(code)
                leave(code)
            return disable

        def record_start(code: CodeType, offset: int) -> Any:
            if code in epoch:
                if epoch[code][1] == trace.clock and not trace._changing:
                    trace._muted[code] = None
                    return disable
                return None
            first(code)
            return None

        def record_finish(code: CodeType, offset: int, value: Any) -> Any:
            if code in epoch:
                span = epoch[code]
                if span[1] == trace.clock and not trace._changing:
                    trace._muted[code] = None
                    return disable
                span[1] = trace.clock
                return None
            first(code)  # a return with no entry in this epoch
            return None

        def rearm(codes: dict[CodeType, None]) -> None:
            off_on = itertools.cycle((0, recording))
            twice = itertools.chain.from_iterable(zip(codes, codes, strict=True))
            collections.deque(map(set_local, itertools.repeat(local), twice, off_on), maxlen=0)

        events = mon.events
        mon.register_callback(local, events.PY_START, record_start)
        mon.register_callback(local, events.PY_RESUME, record_start)
        mon.register_callback(local, events.PY_RETURN, record_finish)
        mon.register_callback(local, events.PY_YIELD, record_finish)
        self._recording_tool = local, armed
        self._rearm = rearm  # type: ignore[method-assign]
        return find_start, find_finish, arm

    def _stop_functions(self) -> None:
        if not self._functions_on:
            return
        tool = getattr(self, "_monitoring_tool", None)
        if tool is not None:  # pragma: no cover - Python 3.12+ only
            sys.monitoring.set_events(tool, 0)  # type: ignore[attr-defined]
            sys.monitoring.free_tool_id(tool)  # type: ignore[attr-defined]
            recording = getattr(self, "_recording_tool", None)
            if recording is not None:  # no workflow code records after the dump
                mon, (local, armed) = sys.monitoring, recording  # type: ignore[attr-defined]
                for code in list(armed):
                    mon.set_local_events(local, code, 0)
                for event in (mon.events.PY_START, mon.events.PY_RESUME):
                    mon.register_callback(local, event, None)
                for event in (mon.events.PY_RETURN, mon.events.PY_YIELD):
                    mon.register_callback(local, event, None)
                mon.free_tool_id(local)
            self._muted = {}
        elif self.mode == "instrument":
            if self._finder in sys.meta_path:
                sys.meta_path.remove(self._finder)
            for code in self._bodies:  # bodies running when tracing began end with it
                self._leave(code)
        else:
            sys.settrace(None)
            threading.settrace(None)
        self._functions_on = False

    def set_job(self, job: Optional[str]) -> None:
        """The job this process is serving now (sticky workers, for digests)."""
        self.job = job
        if self.role != "dag":  # the programs a request starts are that job's
            os.environ[ENV_JOB] = job or ""
            os.environ[ENV_PARENT] = self.name
            os.environ.pop(ENV_PARENT_CLOCK, None)
        with self._lock:  # each request logs its own first reads (a file edge per request)
            self._opened.clear()

    def dump(self) -> None:
        """Write the function records and the final clock; later calls do nothing."""
        with self._lock:
            if self._dumped:
                return
            self._dumped = True
            self._stop_functions()
            self.clock += 1
            # Functions still on a stack never return: EAS treats them as returned-into now.
            instrumented = getattr(self, "mode", "") == "instrument"
            for frame in sys._current_frames().values():
                f: Optional[FrameType] = frame
                while f is not None:
                    code = f.f_code
                    if instrumented and _instrument.EPOCH in code.co_names:
                        # Recording code keyed by its report name (killed mid-call: SIGTERM).
                        self._leave(f"{self.module_name(code.co_filename)}.{code.co_qualname}")
                    elif not instrumented and self._wanted.get(code):
                        self._leave(code)
                    f = f.f_back
            epochs = [*self._closed, self._epoch]
            for epoch in epochs:
                for code, (first, last) in epoch.items():
                    name = self._names.get(code) or code  # instrumented code: keyed by name
                    # Two threads returning at once can store an older clock last: a return
                    # is never before the first entry.
                    self._write({"k": "fn", "f": name, "c": [first, max(first, last)]})
            for (code, job), (count, digest) in self._digest.items():
                name = self._names[code]
                self._write(
                    {"k": "digest", "f": name, "job": job, "n": count, "h": digest.hexdigest()}
                )
            mode = getattr(self, "mode", None)
            # Every mode of this tracer sees every call of a workflow function however it is
            # reached (instrument included); an older log's wrap mode did not: the analysis
            # warns there instead of trusting an absence.
            complete = mode in COMPLETE_MODES
            self._write({"k": "end", "c": self.clock, "mode": mode, "complete": complete})
            self._out.close()


class _InstrumentingFinder:
    # A meta path finder by protocol (importlib.abc would import importlib.resources and
    # pathlib into every traced process: tens of milliseconds per child process).
    """Finds modules as usual; the workflow's own modules load with recording function bodies."""

    def __init__(self, trace: ProcessTrace) -> None:
        self.trace = trace

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        # Cheap refusal first: this finder sits in front of every import of the process.
        root = self.trace.root
        if path is None:
            head = fullname.partition(".")[0]
            places = [os.path.abspath(p or ".") for p in sys.path if isinstance(p, str)]
            places = [p for p in places if p == root or p.startswith(root + os.sep)]
            if not any(
                _kind(os.path.join(p, head + ".py"))
                or stat_module.S_ISDIR(_kind(os.path.join(p, head)))
                for p in places
            ):
                return None
        elif not any(os.path.abspath(p).startswith(root + os.sep) for p in path):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        if spec is None or spec.loader is None or not spec.origin:
            return None
        origin = os.path.abspath(spec.origin)
        if not origin.endswith(".py") or not self.trace.wanted_file(origin):
            return None
        if not isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            return None
        spec.loader = _InstrumentingLoader(fullname, origin, self.trace)
        return spec


class _InstrumentingLoader(importlib.machinery.SourceFileLoader):
    """A source loader that compiles with recording bodies and never reads or writes ``.pyc``
    files (an instrumented ``.pyc`` must not be loaded by an untraced run)."""

    def __init__(self, fullname: str, path: str, trace: ProcessTrace) -> None:
        super().__init__(fullname, path)
        self.trace = trace

    def get_code(self, fullname: str) -> Any:
        path = self.get_filename(fullname)
        return self.trace.compile(self.get_data(path), path)

    def exec_module(self, module: ModuleType) -> None:
        with self.trace.span(module.__file__ or module.__name__):
            super().exec_module(module)


def _stable(value: Any, depth: int = 0) -> str:
    """A run-independent text for a value: no memory addresses, sets sorted, arrays by bytes."""
    if depth > 4:
        return type(value).__name__
    if value is None or isinstance(value, (bool, int, str, bytes)):
        return repr(value)
    if isinstance(value, float):
        return repr(round(value, 9))
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_stable(v, depth + 1) for v in value[:200]) + "]"
    if isinstance(value, dict):
        items = sorted(((str(k), _stable(v, depth + 1)) for k, v in list(value.items())[:200]))
        return "{" + ",".join(f"{k}:{v}" for k, v in items) + "}"
    if isinstance(value, (set, frozenset)):
        return "{" + ",".join(sorted(_stable(v, depth + 1) for v in value)) + "}"
    tobytes = getattr(value, "tobytes", None)
    if callable(tobytes):
        import hashlib

        try:
            return hashlib.blake2b(tobytes(), digest_size=8).hexdigest()
        except Exception:
            pass
    try:
        return _ADDRESS.sub("", repr(value))
    except Exception:
        return type(value).__name__


class StateFingerprint:
    """A content digest of the state a sticky worker carries from one request to the next.

    Walks objects (attributes, containers, array bytes) up to ``budget`` nodes; what it cannot
    read (an object with neither attributes nor bytes that does not pickle, or a walk over
    budget) makes the digest ``None``: unknown, which the analysis counts as "changed".
    """

    def __init__(self, budget: int = 200_000, classes: "frozenset[str]" = frozenset()) -> None:
        self.budget = budget
        self.classes = classes
        """Modules whose classes are digested by their attributes (the workflow's own)."""

    def digest(self, roots: dict[str, Any]) -> Optional[str]:
        import hashlib

        h = hashlib.blake2b(digest_size=16)
        self._left = self.budget
        self._seen: set[int] = set()
        try:
            for name in sorted(roots):
                # Each root on its own: an object two roots share is digested in both, so a
                # root appearing (a module imported by a request) changes only its own part.
                self._seen = set()
                h.update(name.encode() + b"=")
                self._walk(roots[name], h)
        except _Unreadable:
            return None
        return h.hexdigest()

    def _walk_code(self, code: CodeType, h: Any) -> None:
        # Which code, not its bytes: the tracer itself swaps a function's code for recording
        # code (instrument mode), which is no change of the state the function carries.
        h.update(f"{code.co_filename}:{code.co_firstlineno}:{code.co_qualname};".encode())

    def _walk(self, value: Any, h: Any) -> None:
        self._left -= 1
        if self._left < 0:
            raise _Unreadable
        if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
            h.update(repr(value).encode() + b";")
            return
        if (
            isinstance(value, type)
            and value.__module__ in self.classes
            and id(value) not in self._seen
        ):
            # A class of the workflow's own code: its attributes are state (a class-level cache)
            self._seen.add(id(value))
            h.update(f"<class {value.__qualname__}>".encode())
            members = {k: v for k, v in vars(value).items() if not k.startswith("__")}
            self._walk(members, h)
            return
        if isinstance(value, (staticmethod, classmethod)):
            self._walk(value.__func__, h)
            return
        if isinstance(value, property):
            self._walk((value.fget, value.fset, value.fdel), h)
            return
        if (
            isinstance(value, (ModuleType, type))
            or callable(value)
            and not hasattr(value, "__dict__")
        ):
            h.update(f"<{type(value).__name__} {getattr(value, '__name__', '')}>;".encode())
            return
        key = id(value)
        if key in self._seen:
            h.update(b"<seen>;")
            return
        self._seen.add(key)
        tobytes = getattr(value, "tobytes", None)
        if callable(tobytes) and hasattr(value, "shape"):
            h.update(f"{type(value).__name__}{value.shape}{getattr(value, 'dtype', '')}".encode())
            h.update(tobytes())
            return
        if isinstance(value, dict):  # dict.items: a config recorder notes no read here
            h.update(b"{")
            for k, v in list(dict.items(value)):
                self._walk(k, h)
                self._walk(v, h)
            h.update(b"}")
            return
        if isinstance(value, (list, tuple, set, frozenset)):
            items = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else value
            h.update(type(value).__name__.encode() + b"[")
            for item in list(items):
                self._walk(item, h)
            h.update(b"]")
            return
        cache_info = getattr(value, "cache_info", None)
        if callable(cache_info):  # functools.lru_cache: its hits are state, its code is not
            h.update(repr(cache_info()).encode())
            return
        if isinstance(value, FunctionType):  # which code, its defaults, closure, attributes
            h.update(f"<fn {value.__qualname__}>".encode())
            self._walk_code(value.__code__, h)
            self._walk(value.__defaults__, h)
            self._walk(value.__kwdefaults__, h)
            for cell in value.__closure__ or ():
                try:
                    contents = cell.cell_contents
                except ValueError:  # a cell not filled yet
                    h.update(b"<empty cell>;")
                    continue
                self._walk(contents, h)
            if value.__dict__:
                self._walk(value.__dict__, h)
            return
        if isinstance(value, MethodType):
            self._walk(value.__func__, h)
            self._walk(value.__self__, h)
            return
        if isinstance(value, functools.partial):
            self._walk(value.func, h)
            self._walk(value.args, h)
            self._walk(value.keywords, h)
            return
        state = getattr(value, "__dict__", None)
        slots = [s for c in type(value).__mro__ for s in getattr(c, "__slots__", ())]
        if isinstance(state, dict) or slots:
            h.update(type(value).__qualname__.encode() + b"(")
            if isinstance(state, dict):
                self._walk(state, h)
            for slot in slots:
                self._walk(getattr(value, slot, None), h)
            h.update(b")")
            return
        try:
            import pickle

            h.update(pickle.dumps(value, protocol=4))
        except Exception:
            raise _Unreadable from None


class _Unreadable(Exception):
    pass


_RECORD = "_distea_recording"
_SILENT = frozenset(
    {"keys", "_names", "_get_names", "_allowed_overrides", "__class__", "__len__", "__dir__"}
    | {"__init_subclass__", "__subclasshook__", "__sizeof__", _RECORD}
)
"""Attributes of ``snakemake.params`` that reveal no parameter value (names, length, type)."""


class _ParamsRecorder:
    """Mixed into a copy of ``snakemake.params`` (a Namedlist: a list with named items): notes
    which parameters a job reads, by key.

    ``.name``, ``["name"]``, ``.get("name", d)`` and ``getattr(p, "name")`` note ``name`` (also
    when the rule has no such parameter: adding it later changes what the job reads);
    ``keys()`` and ``len()`` note nothing; everything else (iteration, ``dict(p)`` through
    ``items()``, an index, ``str(p)``, ``vars(p)``, any other method) cannot be attributed to
    one key and notes every parameter of the rule. The copy is an instance of a subclass of
    the real class, so ``isinstance`` checks and list behaviour are unchanged.
    """

    def _note(self, name: Optional[str]) -> None:
        trace, job, names, quiet = object.__getattribute__(self, "__dict__")[_RECORD]
        if quiet[0]:
            return
        for key in names if name is None else (name,):
            trace.note_param(key, job)

    def __getattribute__(self, name: str) -> Any:
        if name not in _SILENT:
            names = object.__getattribute__(self, "__dict__")[_RECORD][2]
            if name in names:
                _ParamsRecorder._note(self, name)
            elif name != "get":
                _ParamsRecorder._note(self, None)
        return object.__getattribute__(self, name)

    def get(self, key: Any, default: Any = None) -> Any:
        record = object.__getattribute__(self, "__dict__")[_RECORD]
        _ParamsRecorder._note(self, key if isinstance(key, str) else None)
        record[3][0] += 1  # the real get() looks at __dict__: not a read of every parameter
        try:
            return super().get(key, default)  # type: ignore[misc]
        finally:
            record[3][0] -= 1

    def __getitem__(self, key: Any) -> Any:
        _ParamsRecorder._note(self, key if isinstance(key, str) else None)
        return super().__getitem__(key)  # type: ignore[misc]

    def __iter__(self) -> Any:
        _ParamsRecorder._note(self, None)
        return super().__iter__()  # type: ignore[misc]

    def __reversed__(self) -> Any:
        _ParamsRecorder._note(self, None)
        return super().__reversed__()  # type: ignore[misc]

    def __contains__(self, value: Any) -> bool:
        _ParamsRecorder._note(self, None)
        return super().__contains__(value)  # type: ignore[misc]

    def __eq__(self, other: Any) -> bool:
        _ParamsRecorder._note(self, None)
        return super().__eq__(other)  # type: ignore[misc,no-any-return]

    def __ne__(self, other: Any) -> bool:
        _ParamsRecorder._note(self, None)
        return super().__ne__(other)  # type: ignore[misc,no-any-return]

    def __repr__(self) -> str:
        _ParamsRecorder._note(self, None)
        return super().__repr__()  # type: ignore[misc,no-any-return]

    def __hash__(self) -> int:
        _ParamsRecorder._note(self, None)
        return super().__hash__()  # type: ignore[misc,no-any-return]


_RECORDER_CLASSES: dict[type, type] = {}


def recording_params(params: Any, trace: "ProcessTrace", job: Optional[str]) -> Any:
    """A copy of ``params`` that notes, per key, what the job reads (see :class:`_ParamsRecorder`).

    Anything that is not a named list (an unusual object) counts as read entirely, now.
    """
    names = tuple(getattr(params, "_names", None) or ())
    base = type(params)
    if not isinstance(params, list) or not hasattr(params, "__dict__"):
        for name in names:
            trace.note_param(name, job)
        return params
    cls = _RECORDER_CLASSES.get(base)
    if cls is None:
        cls = type(base.__name__, (_ParamsRecorder, base), {})
        cls.__module__ = base.__module__
        cls.__qualname__ = base.__qualname__
        _RECORDER_CLASSES[base] = cls
    copy = cls.__new__(cls)  # type: ignore[call-overload]  # a list subclass: list.__new__
    list.extend(copy, params)
    state = object.__getattribute__(copy, "__dict__")
    state.update(params.__dict__)
    state[_RECORD] = (trace, job, frozenset(names), [0])
    return copy


def watch_job(trace: ProcessTrace, smk: Any) -> str:
    """Name the job of a ``snakemake`` object and record its parameter reads; return its key.

    ``snakemake.params`` is a property rebuilt on every access, so the object's class is
    swapped for a subclass whose ``params`` wraps the real one in a recorder.
    """
    key = job_key(smk.rule, dict(smk.wildcards.items()), list(smk.output))
    try:
        smk.__dict__["_distea_watch"] = (trace, key)
        smk.__class__ = _watched_class(type(smk))
    except Exception:  # an unusual object: its parameters count as read at job start
        pass
    return key


_WATCHED: dict[type, type] = {}


def _watched_class(base: type) -> type:
    if getattr(base, "_distea_watched", False):
        return base
    cls = _WATCHED.get(base)
    if cls is None:
        real: Any = base.__dict__.get("params") or getattr(base, "params", None)

        def params(self: Any) -> Any:
            value = real.__get__(self, base) if hasattr(real, "__get__") else real
            trace, key = self.__dict__["_distea_watch"]
            return recording_params(value, trace, key)

        def config(self: Any) -> Any:
            value = self.__dict__.get("config")
            if isinstance(value, dict) and not isinstance(value, _config.ConfigRecorder):
                trace, _ = self.__dict__["_distea_watch"]
                value = _config.recording_copy(value, trace.note_config)
                self.__dict__["config"] = value
            return value

        def set_config(self: Any, value: Any) -> None:
            self.__dict__["config"] = value

        members = {
            "params": property(params),
            "config": property(config, set_config),
            "_distea_watched": True,
        }
        cls = type(base.__name__, (base,), members)
        cls.__module__ = base.__module__
        cls.__qualname__ = base.__qualname__
        _WATCHED[base] = cls
    return cls


_ACTIVE: Optional[ProcessTrace] = None


def active() -> Optional[ProcessTrace]:
    """The trace of this process, if tracing was started."""
    return _ACTIVE


def start(
    role: str,
    directory: Optional[str] = None,
    aliases: Optional[dict[str, str]] = None,
    **fields: Any,
) -> Optional[ProcessTrace]:
    """Start tracing this process when ``$DISTEA_TRACE`` (or ``directory``) names a folder.

    Returns None, doing nothing, when tracing is not requested. Installs the file-read audit
    hook, the function tracer and the exit handlers (atexit and SIGTERM, which ends a
    Snakemake service job).
    """
    global _ACTIVE
    if _ACTIVE is not None:
        for real, shown in (aliases or {}).items():
            _ACTIVE.alias(real, shown)
        if _ACTIVE.from_hook and role not in ("child", "script"):
            # A process started as a job's program that is a tracing process of its own kind
            # (a sticky worker): it is logged as that from here.
            job = fields.pop("job", None)
            name = fields.pop("name", None)
            fields.pop("workflow_code_reads_only", None)
            _ACTIVE.take_over(role, job, name=name, **fields)
        return _ACTIVE
    directory = directory or os.environ.get(ENV_DIR)
    if not directory:
        return None
    with _termination_deferred():  # a log without its exit handler would stay without records
        trace = ProcessTrace(
            directory,
            role,
            root=os.environ.get(ENV_ROOT),
            digests=os.environ.get(ENV_DIGESTS) == "1",
            **fields,
        )
        for real, shown in (aliases or {}).items():
            trace.alias(real, shown)
        _ACTIVE = trace
        _install_open_hook(trace)
        _install_stat_watch(trace)
        _install_exit_hooks()
    if role != "dag":  # Snakemake's own process names the job per command (see _snakemake)
        os.environ[ENV_PARENT] = trace.name
        os.environ.pop(ENV_PARENT_CLOCK, None)
        os.environ[ENV_JOB] = trace.job or ""
    else:  # a job named by whatever started Snakemake is none of this run's
        for key in (ENV_PARENT, ENV_PARENT_CLOCK, ENV_JOB):
            os.environ.pop(key, None)
    os.environ["PYTHONPATH"] = _hooked_pythonpath(trace, None)
    trace.start_functions()
    return trace


def start_child() -> Optional[ProcessTrace]:
    """Trace a Python process that a traced job started (called by the start-up hook that
    :func:`start` puts on ``PYTHONPATH``): its job, parent and the parent's clock come from
    the environment; does nothing unless a job is named there."""
    job = os.environ.get(ENV_JOB)
    if _ACTIVE is not None or not job or not os.environ.get(ENV_DIR):
        return None
    parent = os.environ.get(ENV_PARENT) or None
    clock: Optional[int] = None
    raw = os.environ.get(ENV_PARENT_CLOCK, "")
    argv = getattr(sys, "orig_argv", sys.argv)
    # multiprocessing's spawn and forkserver start their interpreter without an audit event,
    # so a clock left in the environment by an earlier start would be too early: unknown.
    if raw.isdigit() and not any("multiprocessing" in a for a in argv):
        clock = int(raw)
    # A Snakemake process (a run: job the local executor runs in a subprocess) reads the
    # Snakefile, configs and lists folders for itself: only reads by workflow code count.
    snakemake = any(a == "snakemake" or a.endswith(os.sep + "snakemake") for a in argv[:4])
    trace = start(
        "child", job=job, from_hook=True, parent=parent, parent_clock=clock, argv=list(argv[:8]),
        workflow_code_reads_only=snakemake,
    )  # fmt: skip
    if trace is not None and snakemake:  # its run: code reads the config too: key by key
        from . import _snakemake

        _snakemake.record_config_reads(trace)
    return trace


def _dump_active() -> None:
    """Write the records of this process's trace (atexit, SIGTERM, ``os._exit``); a trace
    inherited from a parent by ``fork`` is never written from here (the child has its own)."""
    trace = _ACTIVE
    if trace is not None and trace.pid == os.getpid():
        trace.dump()


@contextmanager
def _termination_deferred() -> Iterator[None]:
    """SIGTERM waits while this process switches logs (a pool terminating a worker that is
    just starting): its handler then writes the records to the new log, not a half-open one."""
    try:
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    except (AttributeError, OSError, ValueError):
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


_EXIT_HOOKS: list[Any] = []


def _install_exit_hooks() -> None:
    """Once per process: records written at exit however the process ends (normally, by
    SIGTERM, by ``os._exit`` as multiprocessing children do); fork children trace themselves."""
    if _EXIT_HOOKS:
        return
    atexit.register(_dump_active)
    real_exit = os._exit

    def exit_recorded(code: int) -> Any:
        try:
            _dump_active()
        finally:
            real_exit(code)

    os._exit = exit_recorded  # type: ignore[assignment]
    os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)
    _EXIT_HOOKS.append(real_exit)
    if threading.current_thread() is threading.main_thread():
        previous = signal.getsignal(signal.SIGTERM)

        def on_term(signum: int, frame: Any) -> None:
            trace = _ACTIVE
            if trace is not None and trace.pid == os.getpid() and trace._dumped:
                # The process is already writing its records on its way out (os._exit,
                # atexit): raising here would cut that short; it ends when they are written.
                return
            _dump_active()
            if callable(previous):
                previous(signum, frame)
            else:
                raise SystemExit(128 + signum)

        try:
            signal.signal(signal.SIGTERM, on_term)
        except ValueError:  # not the main interpreter
            pass


_FORK_POINT: list[tuple[str, int]] = []


def _before_fork() -> None:
    _FORK_POINT.clear()
    trace = _ACTIVE
    if (
        trace is not None
        and trace.pid == os.getpid()
        and not trace._dumped
        and trace.role != "dag"  # Snakemake forking for itself: not a job's process
    ):
        _FORK_POINT.append((trace.name, trace.spawn_point()))


def _after_fork_in_child() -> None:
    trace = _ACTIVE
    if trace is not None and _FORK_POINT and not trace._dumped:
        parent, clock = _FORK_POINT[0]
        trace.become_child(parent, clock)


_HOOK_SOURCE = '''"""Written by distea.tracer: trace the Python processes that a traced job starts.

Does nothing unless the environment names a job (DISTEA_JOB); then chains to the site's own
sitecustomize, if there is one.
"""


def _distea_child():
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    if os.environ.get("DISTEA_JOB") and os.environ.get("DISTEA_TRACE"):
        try:
            from distea import tracer
        except ImportError:
            pass  # another interpreter: the job's warning names it (a Python child untraced)
        else:
            tracer.start_child()
    ours = sys.modules.pop("sitecustomize")
    try:
        import sitecustomize  # noqa: F401  (the site's own, if any, now that ours is off the path)
    except ImportError:
        pass
    finally:
        sys.modules["sitecustomize"] = ours  # the import system expects this module here


_distea_child()
'''


_HOOKS_WRITTEN: set[str] = set()


def _hook_folder(trace: ProcessTrace) -> str:
    """The folder of the start-up hook (``sitecustomize.py``), checked and written once per
    trace folder and process (programs start often; the file does not change)."""
    folder = os.path.join(trace.directory, HOOK_FOLDER)
    if folder in _HOOKS_WRITTEN:
        return folder
    _HOOKS_WRITTEN.add(folder)
    target = os.path.join(folder, "sitecustomize.py")
    try:
        with open(target, encoding="utf-8") as f:
            current: Optional[str] = f.read()
    except OSError:
        current = None
    if current != _HOOK_SOURCE:
        try:
            os.makedirs(folder, exist_ok=True)
            partial = os.path.join(folder, f".sitecustomize.{os.getpid()}.tmp")
            with open(partial, "w", encoding="utf-8") as f:
                f.write(_HOOK_SOURCE)
            os.replace(partial, target)
        except OSError:
            pass
    return folder


def _hooked_pythonpath(trace: ProcessTrace, env: "Optional[MutableMapping[Any, Any]]") -> str:
    """``PYTHONPATH`` with the start-up hook's folder first (once)."""
    source: Any = os.environ if env is None else env
    current = source.get("PYTHONPATH")
    if current is None and env is not None and not isinstance(env, os._Environ):
        current = env.get(b"PYTHONPATH")  # an environment with bytes keys (os.execve)
    if isinstance(current, bytes):
        current = os.fsdecode(current)
    current = current or ""
    folder = _hook_folder(trace)
    parts = [p for p in current.split(os.pathsep) if p and p != folder]
    return os.pathsep.join([folder, *parts])


def _workflow_frame(trace: ProcessTrace, depth: int = 2) -> bool:
    """Does this read come from workflow code (a Snakefile, a helper module)?

    The innermost caller that is either workflow code or Snakemake (or a plugin) decides:
    libraries in between (pandas, csv, linecache) are skipped, and Snakemake's own reads made
    while the Snakefile runs (a ``rule`` decorator reading the Snakefile's lines) are not
    the workflow's.
    """
    try:
        frame: Optional[FrameType] = sys._getframe(depth)
    except ValueError:  # raised from C code with no Python caller
        return False
    wanted, decide = trace._wanted, trace._decide
    side = _snakemake_side()
    while frame is not None:
        ok = wanted.get(frame.f_code)
        if ok is None:
            ok = decide(frame.f_code)
        if ok:
            return True
        if frame.f_code.co_filename.startswith(side):
            return False
        frame = frame.f_back
    return False


def _workflow_on_stack(trace: ProcessTrace) -> bool:
    """Is workflow code anywhere on the stack (a listing Snakemake makes for it)?"""
    try:
        frame: Optional[FrameType] = sys._getframe(2)
    except ValueError:  # raised from C code with no Python caller
        return False
    wanted, decide = trace._wanted, trace._decide
    while frame is not None:
        ok = wanted.get(frame.f_code)
        if ok is None:
            ok = decide(frame.f_code)
        if ok:
            return True
        frame = frame.f_back
    return False


def _install_stat_watch(trace: ProcessTrace) -> None:
    """``os.stat``/``os.lstat`` (``os.path.exists``, ``Path.exists``, ``isfile``): whether a
    file of the workflow exists is read too (an optional input, a cache check); logged as a
    read of it (also when it does not exist: creating it later is a change)."""
    if getattr(os.stat, "_distea", False):
        return
    root = trace.root + os.sep

    def watched(real: Any) -> Any:
        @functools.wraps(real)
        def stat(path: Any, *args: Any, **kwargs: Any) -> Any:
            active = _ACTIVE
            if active is not None and not active._dumped and kwargs.get("dir_fd") is None:
                try:
                    if isinstance(path, (str, bytes, os.PathLike)):
                        full = active.workflow_path(os.path.abspath(os.fsdecode(path)))
                        if (
                            full.startswith(root)
                            and not full.endswith((".py", ".pyc"))
                            and not full.startswith(active.directory)
                        ):
                            relative = full[len(root) :]
                            if not relative.startswith(".snakemake") and (
                                not active.workflow_code_reads_only or _workflow_frame(active)
                            ):
                                active.note_open(relative)
                except Exception:  # never let the watch change what stat does
                    pass
            return real(path, *args, **kwargs)

        stat._distea = True  # type: ignore[attr-defined]
        return stat

    os.stat = watched(os.stat)  # type: ignore[assignment]
    os.lstat = watched(os.lstat)  # type: ignore[assignment]


def _snakemake_side() -> tuple[str, ...]:
    """File name prefixes of Snakemake, its plugin packages and this project's plugins."""
    ours = os.path.dirname(_OWN_DIR.rstrip(os.sep)) + os.sep
    snakemake = sys.modules.get("snakemake")
    where = getattr(snakemake, "__file__", None)
    if not where:
        return (ours,)
    # ".../site-packages/snakemake" also prefixes snakemake_interface_*, snakemake_*_plugin_*.
    return (os.path.dirname(os.path.dirname(where)) + os.sep + "snakemake", ours)


def _caller_file() -> str:
    """The file of the Python code that raised the audit event ("" when C code did, e.g. the
    interpreter printing a traceback's source lines)."""
    try:
        return sys._getframe(2).f_code.co_filename
    except ValueError:
        return ""


def _python_script(program: str) -> bool:
    """Is ``program`` a file whose ``#!`` line runs Python (started by its path)?"""
    if os.sep not in program or not stat_module.S_ISREG(_kind(program)):
        return False
    try:
        with open(program, "rb") as f:
            first = f.readline(200)
    except OSError:
        return False
    return first.startswith(b"#!") and b"python" in first


_SPAWNS = {
    "subprocess.Popen": (1, 3),
    "os.system": (0, None),
    "os.posix_spawn": (1, 2),
    "os.exec": (1, 2),
    "os.spawn": (2, 3),
}
"""Audit events that start a program: (index of its argv, index of its environment)."""
_LISTINGS = frozenset({"os.listdir", "os.scandir"})

_COMMAND_JOB = threading.local()


@contextmanager
def commands_of(job: Optional[str]) -> Iterator[None]:
    """In Snakemake's own process: programs started by this thread inside the block run for
    ``job`` (its ``shell:`` command, its script's interpreter): they are traced as its
    processes."""
    previous = getattr(_COMMAND_JOB, "job", None)
    _COMMAND_JOB.job = job
    try:
        yield
    finally:
        _COMMAND_JOB.job = previous


def command_job() -> Optional[str]:
    """The job whose programs this thread of Snakemake's process is starting (or None)."""
    return getattr(_COMMAND_JOB, "job", None)


def listing_path(relative: str) -> str:
    """How a directory listing is logged: an ``open`` of the folder's path with a trailing
    ``/`` (``./`` for the workflow directory itself)."""
    return relative.rstrip("/") + "/" if relative else "./"


def _spawned(trace: ProcessTrace, event: str, args: tuple[Any, ...]) -> None:
    """A program is being started: name the job (and this process) in its environment."""
    argv_at, env_at = _SPAWNS[event]
    argv = args[argv_at] if len(args) > argv_at else ()
    env = args[env_at] if env_at is not None and len(args) > env_at else None
    job = command_job() if trace.role == "dag" else trace.job
    if env is not None and not isinstance(env, MutableMapping):
        env = None if not isinstance(env, Mapping) else env
        if env is not None:  # an immutable environment: the child cannot be told its job
            if job:
                trace.note_spawn(argv, job)
            return
    if env is not None and ENV_DIR not in env and ENV_DIR.encode() not in env:
        # An environment the job built itself without tracing: respected (the child runs
        # untraced, and a Python child is warned about by job name).
        if job:
            trace.note_spawn(argv, job)
        return
    if trace.role == "dag":
        if not job:
            return  # Snakemake's own programs (sticky workers, conda): not a job's
        clock = trace.note_spawn(argv, job)
        if env is not None:  # its own environment (Snakemake's shell passes one)
            trace.child_environment(env, clock, job)
        # else: os.environ is shared by every thread of Snakemake's process, so the program
        # cannot be told its job; a Python one is then warned about by the job's name.
        return
    clock = trace.note_spawn(argv)
    trace.child_environment(env, clock)
    if event == "os.exec":  # this process becomes the program: its records now or never
        trace.dump()


def _install_open_hook(trace: ProcessTrace) -> None:
    root = trace.root + os.sep
    own = trace.directory + os.sep  # the trace folder: DISTEA's own files

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event in _SPAWNS:
            if _ACTIVE is trace and not trace._dumped:
                _spawned(trace, event, args)
            return
        if event in _LISTINGS:
            if _ACTIVE is not trace or trace._dumped:
                return
            folder = args[0] if args else None
            if folder is None:
                folder = "."
            if isinstance(folder, bytes):
                folder = os.fsdecode(folder)
            if not isinstance(folder, str):
                return  # a file descriptor
            if _caller_file().startswith("<frozen importlib"):
                return  # the import system looking for modules
            full = trace.workflow_path(os.path.abspath(folder))
            if full == trace.root or full == trace.shadow:
                relative = ""
            elif full.startswith(root):
                relative = full[len(root) :]
            else:
                return
            if relative.startswith(".snakemake") or "__pycache__" in relative:
                return
            # Snakemake's process: a listing made for workflow code (glob_wildcards, expand
            # over a folder), however deep in Snakemake's own helpers.
            if trace.workflow_code_reads_only and not _workflow_on_stack(trace):
                return
            trace.note_open(listing_path(relative))
            return
        if event == "sqlite3.connect":  # a database file read by sqlite's C code
            event, args = "open", (args[0] if args else None, "r", None)
        if event != "open" or _ACTIVE is not trace or trace._dumped:
            return
        path, mode, flags = args
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, str):
            return
        if mode is not None:
            writes = any(c in mode for c in "wax+")
            reads = "r" in mode or "+" in mode
        elif flags is not None:
            access = flags & 3
            writes = access != os.O_RDONLY
            reads = access != os.O_WRONLY
        else:
            return
        full = trace.workflow_path(os.path.abspath(path))
        if not full.startswith(root) or full.endswith(".pyc") or full.startswith(own):
            return
        if _caller_file().startswith(_OWN_DIR):
            return  # DISTEA reading a module to instrument it, writing its logs
        relative = full[len(root) :]
        if relative.startswith(".snakemake") or "__pycache__" in relative:
            return
        if full.endswith(".py"):
            # The import system reads modules for itself (their code records itself); a
            # workflow's .py read otherwise (exec of its text, runpy) is data like any file.
            if writes or _caller_file().startswith("<frozen importlib"):
                return
        if trace.workflow_code_reads_only and not _workflow_frame(trace):
            return  # Snakemake's own reads (the Snakefile, hashing, checks) are not the workflow's
        if reads:
            trace.note_open(relative)
        if writes:
            trace.note_write(relative)

    sys.addaudithook(hook)
