"""A sticky worker: ``python -m snakemake_executor_plugin_sticky.worker --worker-id ID``.

The manager's address and the run secret arrive as one JSON line on standard input (local
workers) or in a file readable by its user only, named by ``$STICKY_CONNECTION_FILE`` (Slurm
pilots): never on a command line. The
worker connects back to its manager, then runs invocations one at a time in its main thread
("direct mode": a GPU state is never forked), building each template's state the first time an
invocation needs it and keeping it until it is told to stop. A daemon thread sends heartbeats;
if the manager goes away (connection broken, parent gone) the worker exits at once, so no
worker outlives its run.
"""

import argparse
import builtins
import contextlib
import dataclasses
import json
import os
import resource
import signal
import socket
import sys
import threading
import time
import traceback
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
)

from . import _audit
from ._protocol import (
    Heartbeat,
    Hello,
    InvocationDone,
    Invoke,
    Refused,
    StateBuilt,
    StateFailed,
    Stop,
    TraceStamp,
    message_trace,
)

HEARTBEAT_INTERVAL = 1.0


class StateHolder:
    """The templates and warm states of one worker."""

    def __init__(self) -> None:
        self.templates: dict[str, dict[str, TemplateFunction]] = {}
        self.states: dict[str, BuiltState] = {}
        self.failed: dict[str, TemplateBuildError] = {}
        self.current_template: Optional[str] = None

    def get(self, name: str, templates_file: str) -> tuple[Any, Optional[BuiltState]]:
        """Return (state, freshly built record or None); raise TemplateBuildError."""
        if name in self.failed:
            raise self.failed[name]
        if name in self.states:
            return self.states[name].value, None
        if templates_file not in self.templates:
            try:
                self.templates[templates_file] = load_templates(Path(templates_file))
            except Exception:
                raise TemplateBuildError(name, traceback.format_exc()) from None
        found = self.templates[templates_file]
        if name not in found:
            error = TemplateNotFoundError(name, Path(templates_file), sorted(found))
            raise TemplateBuildError(name, str(error))
        try:
            built = build_state(name, found[name])
        except TemplateBuildError as e:
            self.failed[name] = e
            raise
        self.states[name] = built
        return built.value, built

    def lookup(self, name: str) -> Any:
        """What ``stickyinvoc.state()`` returns inside this worker."""
        if name in self.states:
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
    def __init__(self, conn: Connection, worker_id: str) -> None:
        self.conn = conn
        self.worker_id = worker_id
        self.send_lock = threading.Lock()
        self.holder = StateHolder()
        self.code_cache: dict[tuple[str, int], Any] = {}
        self.parent_pid = os.getppid()
        name = f"worker:{worker_id}:{socket.gethostname()}:{os.getpid()}"
        self.trace = message_trace("worker", name=name, worker_id=worker_id)

    def send(self, message: object) -> None:
        with self.send_lock:
            self.conn.send(message)

    def heartbeat_forever(self) -> None:
        """Beat every second; exit the process when the manager is gone."""
        while True:
            time.sleep(HEARTBEAT_INTERVAL)
            try:
                self.send(Heartbeat())
            except (OSError, EOFError, ValueError):
                os._exit(70)
            if os.getppid() != self.parent_pid:
                os._exit(71)

    def serve(self) -> None:
        self.send(Hello(self.worker_id, os.getpid()))
        threading.Thread(target=self.heartbeat_forever, name="heartbeat", daemon=True).start()
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
        finally:
            self.holder.teardown_all()
            if self.trace is not None:
                self.trace.dump()

    def run_traced(self, inv: Invoke) -> InvocationDone:
        """Run an invocation; when tracing, log its receipt and reply with clocks."""
        trace = self.trace
        if trace is None or inv.trace is None:
            return self.run(inv)
        from distea.tracer import watch_job

        job = watch_job(trace, inv.snakemake)
        trace.recv(inv.trace.message_id, inv.trace.clock, "manager", job=job)
        trace.set_job(job)
        building = inv.template not in self.holder.states and inv.template not in self.holder.failed
        if building:
            trace.note_template(inv.template)
        with contextlib.ExitStack() as spans:
            if getattr(trace, "mode", "") == "wrap":
                # Templates and the exec'd script are loaded around the import system, so the
                # wrapping tracer cannot see them: record them as bodies.
                if building:
                    spans.enter_context(trace.span(inv.templates_file))
                spans.enter_context(trace.span(inv.script_path))
            done = self.run(inv)
        reply = f"{inv.trace.message_id}>done"
        clock = trace.send(reply, "manager", job=job)
        trace.set_job(None)
        return dataclasses.replace(done, trace=TraceStamp(reply, clock))

    def run(self, inv: Invoke) -> InvocationDone:
        self.holder.current_template = inv.template
        try:
            _, built = self.holder.get(inv.template, inv.templates_file)
        except TemplateBuildError as e:
            self.send(StateFailed(inv.template, e.formatted_traceback))
            return InvocationDone(inv.invocation_id, False, str(e), template_failed=True)
        if built is not None:
            self.send(StateBuilt(inv.template, built.build_seconds))
        return self.execute_script(inv)

    def compiled(self, inv: Invoke) -> Any:
        key = (inv.script_path, hash(inv.script_source))
        code = self.code_cache.get(key)
        if code is None:
            code = compile(inv.script_source, inv.script_path, "exec")
            self.code_cache[key] = code
        return code

    def execute_script(self, inv: Invoke) -> InvocationDone:
        """Run the job's script as Snakemake's ``script:`` would, but in this warm process."""
        cwd = os.getcwd()
        if inv.scriptdir and inv.scriptdir not in sys.path:
            sys.path.append(inv.scriptdir)
        seconds: list[float] = []
        cpu: list[float] = []
        _audit.start(cwd, inv.snakemake)  # writes outside outputs and logs: see _audit
        try:
            code = self.compiled(inv)
            for iteration in range(max(1, inv.repeats)):
                if inv.repeats > 1:
                    inv.snakemake.bench_iteration = iteration
                namespace = {
                    "__name__": "__main__",
                    "__file__": inv.script_path,
                    "__builtins__": builtins,
                    "snakemake": inv.snakemake,
                }
                wall, proc = time.perf_counter(), time.process_time()
                try:
                    exec(code, namespace)
                except SystemExit as e:
                    if e.code not in (None, 0):
                        raise RuntimeError(f"script exited with status {e.code}") from e
                seconds.append(time.perf_counter() - wall)
                cpu.append(time.process_time() - proc)
        except BaseException as e:
            if isinstance(e, KeyboardInterrupt):
                raise
            return InvocationDone(inv.invocation_id, False, _script_traceback(inv.script_path))
        finally:
            undeclared = _audit.stop()
            os.chdir(cwd)
            sys.stdout.flush()
            sys.stderr.flush()
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
        return InvocationDone(
            inv.invocation_id, True, None, seconds, cpu, rss_mb, undeclared_writes=undeclared
        )


def _script_traceback(script_path: str) -> str:
    """The traceback from the user's script down, without this worker's own frames."""
    etype, value, tb = sys.exc_info()
    frames = traceback.extract_tb(tb)
    first = next((i for i, f in enumerate(frames) if f.filename == script_path), 0)
    lines = traceback.format_list(frames[first:]) + traceback.format_exception_only(etype, value)
    return "Traceback (most recent call last):\n" + "".join(lines)


def main(argv: Optional[list[str]] = None) -> NoReturn:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--worker-id", required=True)
    args = parser.parse_args(argv)
    # The manager decides when workers stop; a terminal Ctrl-C must not kill a state mid-build.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    connection_file = os.environ.get("STICKY_CONNECTION_FILE")
    if connection_file:
        with open(connection_file) as f:
            info = json.load(f)
    else:
        info = json.loads(sys.stdin.readline())
    host, _, port = info["connect"].rpartition(":")
    conn = Client((host.strip("[]"), int(port)), authkey=bytes.fromhex(info["secret"]))
    Worker(conn, args.worker_id).serve()
    # The states are torn down (serve's finally). Skip the interpreter's own finalisation:
    # with torch loaded it takes most of a second, and the manager waits for this exit.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
