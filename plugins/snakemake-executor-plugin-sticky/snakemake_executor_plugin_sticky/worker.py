"""A sticky worker: ``python -m snakemake_executor_plugin_sticky.worker --worker-id ID``.

The manager's address and the run secret arrive as one JSON line on standard input (local
workers) or in a file readable by its user only, named by ``$STICKY_CONNECTION_FILE`` (Slurm
pilots): never on a command line. The
worker connects back to its manager, then runs invocations one at a time, each in a child
forked from it (fork mode; :mod:`._isolation`) or in its main thread (direct mode: where the
template initialised a GPU runtime, or asks for it), building each template's state the first
time an invocation needs it and keeping it until it is told to stop. Right after connecting
it forks: the parent becomes the worker's supervisor (:mod:`.supervisor`: heartbeats judged
without the GIL, exit causes, no orphans, and the whole process group dies when the manager
goes away); the child runs invocations; its heartbeat thread only stamps shared memory.
"""

import argparse
import contextlib
import dataclasses
import json
import os
import signal
import socket
import sys
import threading
import time
import traceback
from collections.abc import Iterator
from multiprocessing.connection import Client, Connection
from pathlib import Path
from typing import Any, NoReturn, Optional

import stickyinvoc._access as access
from stickyinvoc._templates import (
    BuiltState,
    TemplateBuildError,
    TemplateFunction,
    TemplateNotFoundError,
    build_state,
    load_templates,
    user_traceback,
)

from . import _audit, _isolation, supervisor
from ._hazards import describe as describe_hazards
from ._hazards import fork_hazards, stop_restartable_threads
from ._isolation import Isolation, Script, imported_modules
from ._names import NameWatch
from ._preamble import compile_script
from ._protocol import (
    Heartbeat,
    Hello,
    InvocationDone,
    Invoke,
    Refused,
    StateBuilt,
    StateFailed,
    Stop,
    TornDown,
    TraceStamp,
    message_trace,
)
from ._seeds import SeedWatch
from ._shell_prefix import apply as apply_prefix
from ._template_files import BuildFiles, describe_stale
from ._template_files import describe as describe_file_changes
from ._worker_env import building

HEARTBEAT_INTERVAL = 1.0


class StateHolder:
    """The templates and warm states of one worker."""

    def __init__(self) -> None:
        self.templates: dict[str, dict[str, TemplateFunction]] = {}
        self.states: dict[str, BuiltState] = {}
        self.failed: dict[str, TemplateBuildError] = {}
        self.current_template: Optional[str] = None
        self.build_cwd: dict[str, str] = {}
        """Where a template's build left the working directory, where it moved it: a fresh
        job that builds the template (``stickyinvoc.state``) goes on there."""
        self.looked_up: set[str] = set()
        """The templates the running invocation asked for (``stickyinvoc.state``)."""

    def get(self, name: str, templates_file: str) -> tuple[Any, Optional[BuiltState]]:
        """Return (state, freshly built record or None); raise TemplateBuildError."""
        if name in self.failed:
            raise self.failed[name]
        if name in self.states:
            return self.states[name].value, None
        if templates_file not in self.templates:
            try:
                self.templates[templates_file] = load_templates(Path(templates_file))
            except Exception as e:  # the templates file's own frames and the exception
                raise TemplateBuildError(name, user_traceback(e)) from None
        found = self.templates[templates_file]
        if name not in found:
            error = TemplateNotFoundError(name, Path(templates_file), sorted(found))
            raise TemplateBuildError(name, str(error))
        cwd = os.getcwd()
        try:
            with building():  # no native pool the build need not start (_worker_env)
                built = build_state(name, found[name])
        except TemplateBuildError as e:
            self.failed[name] = e
            raise
        finally:
            moved = os.getcwd()
            if moved != cwd:  # the invocations start where Snakemake's jobs start
                self.build_cwd[name] = moved
                os.chdir(cwd)
        self.states[name] = built
        return built.value, built

    def lookup(self, name: str) -> Any:
        """What ``stickyinvoc.state()`` returns inside this worker; the first call of an
        invocation moves it where the build moved the working directory, as the build does
        in a fresh job."""
        if name in self.states:
            if name not in self.looked_up:
                self.looked_up.add(name)
                if name in self.build_cwd:
                    os.chdir(self.build_cwd[name])
            return self.states[name].value
        raise access.TemplateError(
            f"sticky template {name!r} is not built in this worker; this invocation runs "
            f"against {self.current_template!r} (its rule's resources: sticky=...)"
        )

    def teardown_all(self) -> None:
        for built in reversed(list(self.states.values())):
            problem = built.teardown()
            if problem:
                print(
                    f"teardown of sticky template {built.name!r} failed:\n{problem}",
                    file=sys.stderr,
                )
        self.states.clear()


class Worker:
    def __init__(
        self, conn: Connection, worker_id: str, link: Optional[supervisor.Link] = None
    ) -> None:
        self.conn = conn
        self.worker_id = worker_id
        self.link = link
        # Shared with the supervisor, which writes to the same connection.
        self.send_lock: Any = link.lock if link is not None else threading.Lock()
        self.holder = StateHolder()
        self.code_cache: dict[tuple[str, int], tuple[Any, frozenset[str]]] = {}
        self.prefix_environ = False
        """Whether the Snakefile's shell.prefix() exports are in this process's environment."""
        # Before any template is loaded: it records the interpreter's pristine import path.
        self.isolation = Isolation(link)
        self.hazards: list[str] = []
        """Why this process cannot be forked (:mod:`._hazards`), found after each build."""
        self.build_files: dict[str, BuildFiles] = {}
        """What each template's build made or used on disk, compared after every job
        (:mod:`._template_files`)."""
        self.wrote_in: Optional[frozenset[str]] = None
        """Where the last job wrote (None: not known): :meth:`files_checked`."""
        self.heartbeat: Optional[threading.Thread] = None
        self.fork_next = False
        self.parent_pid = os.getppid()
        name = f"worker:{worker_id}:{socket.gethostname()}:{os.getpid()}"
        self.trace = message_trace("worker", name=name, worker_id=worker_id)
        if self.trace is not None:  # the isolation reseeds the global generators every time
            self.trace.carries_rng = False

    def send(self, message: object) -> None:
        with self.send_lock:
            self.conn.send(message)

    def heartbeat_forever(self) -> None:
        """Beat every second (into shared memory, for the supervisor, which tells the
        manager); exit the process when the supervisor is gone."""
        link = self.link
        while True:
            if link is not None:
                link.beat()
                if not link.supervisor_alive():
                    os._exit(71)
            time.sleep(HEARTBEAT_INTERVAL)
            if link is None:  # no supervisor (tests): send the beat directly
                try:
                    self.send(Heartbeat())
                except (OSError, EOFError, ValueError):
                    os._exit(70)
                if os.getppid() != self.parent_pid:
                    os._exit(71)

    def serve(self) -> None:
        self.send(Hello(self.worker_id, os.getpid()))
        self.heartbeat = threading.Thread(
            target=self.heartbeat_forever, name="heartbeat", daemon=True
        )
        self.heartbeat.start()
        access._bind_worker(self.holder.lookup)
        try:
            while True:
                try:
                    message = self.conn.recv()
                except (EOFError, OSError):
                    return
                if isinstance(message, Stop):
                    return
                if isinstance(message, Refused):
                    print(f"manager refused this worker: {message.reason}", file=sys.stderr)
                    return
                if isinstance(message, Invoke):
                    self.send(self.run_traced(message))
                    self.isolation.idle(self.fork_next)
        finally:
            self.isolation.close()
            self.torn_down()
            if self.trace is not None:
                self.trace.dump()

    def torn_down(self) -> None:
        """Tear the templates down, and tell the manager which files the teardowns changed
        (if it still listens: a retired worker's teardown may run beside other jobs)."""
        if not self.holder.states:
            return
        try:
            _audit.start_build(os.getcwd())
        except OSError:  # the working directory is gone: tear down unwatched
            self.holder.teardown_all()
            return
        try:
            self.holder.teardown_all()
        finally:
            writes = tuple(_audit.stop())
        if writes:
            try:
                self.send(TornDown(writes))
            except (OSError, EOFError, ValueError):
                pass  # the manager is gone: nothing runs beside this worker any more

    def run_traced(self, inv: Invoke) -> InvocationDone:
        """Run an invocation; when tracing, log its receipt and reply with clocks."""
        trace = self.trace
        if trace is None or inv.trace is None:
            return self.run(inv)
        from distea.tracer import watch_job

        job = watch_job(trace, inv.snakemake)
        trace.recv(inv.trace.message_id, inv.trace.clock, "manager", job=job)
        trace.set_job(job)
        states = self.holder.states
        trace.begin_state({k: b.value for k, b in states.items()})
        building = inv.template not in self.holder.states and inv.template not in self.holder.failed
        if building:
            trace.note_template(inv.template)
        with contextlib.ExitStack() as spans:
            if getattr(trace, "mode", "") == "instrument":
                # Templates and the exec'd script are loaded around the import system, so the
                # wrapping tracer cannot see them: record them as bodies.
                if building:
                    spans.enter_context(trace.span(inv.templates_file))
                spans.enter_context(trace.span(inv.script_path))
            done = self.run(inv)
        if building:  # DISTEA: the templates file's functions record from now on
            trace.instrument_loaded()
        # Evidence for the analysis: did this request change what the next one inherits?
        trace.check_state(job, {k: b.value for k, b in states.items()})
        reply = f"{inv.trace.message_id}>done"
        clock = trace.send(reply, "manager", job=job)
        trace.set_job(None)
        return dataclasses.replace(done, trace=TraceStamp(reply, clock))

    def run(self, inv: Invoke) -> InvocationDone:
        if inv.prefix is not None and inv.prefix.environ and not self.prefix_environ:
            # A fresh job builds its template behind the prefix too: the variables it exports
            # are this worker's for the run (the same for every job of it).
            self.prefix_environ = True
            apply_prefix(dataclasses.replace(inv.prefix, cwd=None, umask=None))
        self.holder.current_template = inv.template
        self.holder.looked_up = set()
        resolve_node_tmpdir(inv.snakemake)
        building = inv.template not in self.holder.states
        stale = None if building else self.build_files.get(inv.template)
        changed = stale.changed(frozenset()) if stale is not None else []
        if changed:  # since the last job, by another process: a fresh build reads them anew
            why = describe_stale(inv.template, changed)
            return InvocationDone(inv.invocation_id, False, why, lost=why, retire=why)
        build_watch = None
        if building:  # the files a build writes: not any concurrent job's (checkpoints)
            self.isolation.before_build()
            build_watch = _audit.start_build(inv.workdir or os.getcwd())
        seeds = SeedWatch()  # which generators the template seeds (_seeds): while it builds
        names = NameWatch()  # how far it advances the default-name counters (_names)
        try:
            with contextlib.ExitStack() as watches:
                if building:
                    watches.enter_context(seeds)
                    watches.enter_context(names)
                    watches.enter_context(self.script_import_path(inv))
                _, built = self.holder.get(inv.template, inv.templates_file)
        except TemplateBuildError as e:
            if building:
                _audit.stop()
            self.send(StateFailed(inv.template, e.formatted_traceback))
            return InvocationDone(inv.invocation_id, False, str(e), template_failed=True)
        if building and built is None:
            _audit.stop()
        if built is not None:
            self.isolation.state_changed(
                inv.template,
                frozenset(seeds.seeded),
                tuple(seeds.from_os),
                seeds.torch_threads,
                names.used,
                built.value,
            )
            if inv.isolation == "fork":
                stop_restartable_threads()  # a progress bar's monitor (_hazards)
            self.hazards = fork_hazards([self.heartbeat] if self.heartbeat else [])
            direct = describe_hazards(self.hazards) if inv.isolation == "fork" else None
            writes = tuple(_audit.stop()) if building else ()
            if build_watch is not None:  # after the flush of what it left open (above)
                self.build_files[inv.template] = BuildFiles.after_build(
                    inv.template,
                    build_watch.created(),
                    build_watch.used(),
                    listed=build_watch.reads or {},
                    temporary=build_watch.temporary or (),
                )
            self.send(
                StateBuilt(inv.template, built.build_seconds, direct_because=direct, writes=writes)
            )
            if self.trace is not None and inv.trace is not None:  # DISTEA: a state write
                self.trace.state_built(
                    inv.template, {k: b.value for k, b in self.holder.states.items()}
                )
        return self.files_checked(self.execute_script(inv))

    @contextlib.contextmanager
    def script_import_path(self, inv: Invoke) -> Iterator[None]:
        """While a template builds: ``sys.path`` as the job's script has it, where a fresh
        job builds it (``stickyinvoc.state`` in the script: Snakemake's folders and the
        script's own, so a helper beside the script imports); the worker's own after."""
        saved = sys.path[:]
        sys.path[:] = self.isolation.script_path(
            inv.workdir or os.getcwd(), inv.scriptdir, inv.searchpaths
        )
        try:
            yield
        finally:
            sys.path[:] = saved

    def files_checked(self, done: InvocationDone) -> InvocationDone:
        """Retire this worker after a job that changed what a template's build made or
        used on disk (:mod:`._template_files`): the next job's fresh build starts afresh."""
        if done.retire is not None:
            return done
        written = self.isolation.open_files_changed()
        if written:
            return dataclasses.replace(done, retire=describe_file_changes("", written))
        for files in self.build_files.values():
            changed = files.changed(self.wrote_in)
            if changed:
                return dataclasses.replace(
                    done, retire=describe_file_changes(files.template, changed)
                )
        return done

    def compiled(self, inv: Invoke) -> tuple[Any, frozenset[str]]:
        key = (inv.script_path, hash(inv.script_source))
        entry = self.code_cache.get(key)
        if entry is None:
            if self.trace is not None:  # DISTEA: the script's own functions record themselves
                code = self.trace.compile(inv.script_source, inv.script_path)
            else:  # run as Snakemake's temporary script: its name, its line numbers
                code = compile_script(inv.script_source, inv.script_path)
            entry = (code, imported_modules(inv.script_source))
            self.code_cache[key] = entry
        return entry

    def execute_script(self, inv: Invoke) -> InvocationDone:
        """Run the job's script as a fresh ``script:`` process would (see :mod:`._isolation`;
        its writes outside its outputs and logs are audited there, see :mod:`._audit`)."""
        try:
            code, imports = self.compiled(inv)
        except (SyntaxError, ValueError) as e:  # the user's file and line, as Python prints it
            error = "".join(traceback.format_exception_only(e)).rstrip()
            return InvocationDone(inv.invocation_id, False, error)
        script = Script(
            code=code,
            script_path=inv.script_path,
            scriptdir=inv.scriptdir,
            snakemake=inv.snakemake,
            workdir=inv.workdir or os.getcwd(),
            repeats=inv.repeats,
            benchmarked=inv.benchmarked,
            imports=imports,
            searchpaths=inv.searchpaths,
            template=inv.template,
            prefix=inv.prefix,
            source=None if self.trace is not None else inv.script_source,
        )
        mode = self.mode(inv)
        self.fork_next = mode == "fork"
        self.wrote_in = None
        out = self.isolation.run(script, mode)
        self.wrote_in = None if out.wrote_in is None else frozenset(out.wrote_in)
        return InvocationDone(
            inv.invocation_id,
            out.ok,
            out.error,
            out.seconds,
            out.cpu_seconds,
            out.max_rss_mb,
            usage=out.usage,
            warnings=out.warnings,
            undeclared_writes=out.undeclared_writes,
            retire=out.retire,
            lost=out.lost,
            imported=out.imported,
        )

    def mode(self, inv: Invoke) -> str:
        """How this invocation runs: as its template asks, but in direct mode where forking
        this process is unsafe (:mod:`._hazards`), or while DISTEA traces the worker (its
        records are this process's)."""
        if inv.isolation != "fork" or self.hazards or self.trace is not None:
            return "direct"
        return "fork"


def main(argv: Optional[list[str]] = None) -> NoReturn:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker-id", required=True)
    args = parser.parse_args(argv)
    # The manager decides when workers stop; a terminal Ctrl-C must not kill a state mid-build.
    _isolation.SIGINT_IGNORED_AT_START = signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    connection_file = os.environ.get("STICKY_CONNECTION_FILE")
    connection_fd = os.environ.pop("STICKY_CONNECTION_FD", None)
    if connection_file:
        with open(connection_file) as f:
            info = json.load(f)
    elif connection_fd is not None:  # a local worker: its stdin is Snakemake's own, as a job's
        with os.fdopen(int(connection_fd)) as f:
            info = json.loads(f.readline())
    else:
        info = json.loads(sys.stdin.readline())
    host, _, port = info["connect"].rpartition(":")
    conn = Client((host.strip("[]"), int(port)), authkey=bytes.fromhex(info["secret"]))
    link = supervisor.start(conn)  # returns in the child only; the parent supervises it
    Worker(conn, args.worker_id, link).serve()
    # The states are torn down (serve's finally). Skip the interpreter's own finalisation:
    # with torch loaded it takes most of a second, and the manager waits for this exit.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def resolve_node_tmpdir(snakemake: Any) -> None:
    """Under cluster execution Snakemake leaves a job's ``tmpdir`` resource to be evaluated
    where the job runs ("<TBD>" until then); a Slurm job's inner Snakemake evaluates the
    default, ``system_tmpdir``, to this node's temporary directory. An invocation on a pilot
    gets the same. (A custom ``tmpdir`` expression is not re-evaluated here.)"""
    resources = getattr(snakemake, "resources", None)
    if resources is None or not hasattr(resources, "get"):
        return
    if type(resources.get("tmpdir")).__name__ == "TBDString":
        import tempfile

        tmpdir = tempfile.gettempdir()
        resources.tmpdir = tmpdir
        names = getattr(resources, "_names", {})
        if "tmpdir" in names:
            resources[names["tmpdir"][0]] = tmpdir


if __name__ == "__main__":
    main()
