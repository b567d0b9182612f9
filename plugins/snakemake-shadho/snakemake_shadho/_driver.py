"""SHADHO asynchronously: one long-running driver hands trials to long-lived workers.

``python -m snakemake_shadho search SPEC --out DIR`` (or ``execution: async`` in the search
spec, which makes ``rules/hpo.smk`` run the search as one job) starts ``count`` workers per
hardware class. Each worker is a ``python -m snakemake_shadho worker`` process that imports
the objective (and builds the spec's sticky template state, when the workflow has one) once,
then evaluates one trial per line of its standard input and answers one record per line: a
pilot, talking to the driver over its own pipes (nothing listens on a network port). It is
started through its class's launcher:

- a class with ``slurm_partition``: ``srun --partition=P --cpus-per-task=C`` plus the class's
  ``mem_mb``, ``gres``, ``constraint``, ``slurm_account``, ``qos`` and ``runtime`` (one Slurm
  job per worker, held for the whole search);
- any other class: a local process;
- ``--launcher CLASS="COMMAND ..."`` replaces either (the worker's argv is appended).

Whenever a worker frees it asks :class:`.AsyncSearch` for its class's next trial at once: no
rounds, no barrier. After every result the driver rewrites ``DIR/history.jsonl`` (every
finished trial's record, atomically) and ``DIR/plans.json`` (the plans so far), so a stopped
search keeps every finished trial and a rerun resumes from them; the report comes last.
"""

import json
import os
import shlex
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any, Optional

from ._async import AsyncSearch
from ._errors import ShadhoError
from ._failures import check_failures, first_line, is_undeclared
from ._hardware import HardwareClass
from ._spec import SearchSpec
from ._store import read_json, read_jsonl, write_json, write_jsonl


def launcher_argv(cls: HardwareClass) -> list[str]:
    """The command that starts one worker of ``cls`` (the worker's own argv is appended):
    ``srun`` with the class's Slurm resources when it names a partition, nothing (a local
    process) otherwise."""
    if cls.slurm_partition is None:
        return []
    argv = ["srun", f"--partition={cls.slurm_partition}", f"--cpus-per-task={cls.cpus}"]
    for flag, value in (
        ("--mem", cls.mem_mb),
        ("--gres", cls.gres),
        ("--constraint", cls.constraint),
        ("--account", cls.slurm_account),
        ("--qos", cls.qos),
        ("--time", cls.runtime),
    ):
        if value is not None:
            argv.append(f"{flag}={value}")
    return [*argv, f"--job-name=shadho-{cls.name}", "--quiet"]


def worker_argv(spec_file: str, hw_class: str, search_dirs: Sequence[str]) -> list[str]:
    """The argv of one worker process (after its launcher)."""
    argv = [sys.executable, "-u", "-m", "snakemake_shadho", "worker", spec_file]
    argv += ["--class", hw_class]
    for d in search_dirs:
        argv += ["--search-dir", d]
    return argv


# --- The worker process ---


def serve(
    spec: SearchSpec,
    hw_class: str,
    search_dirs: Sequence[str],
    stdin: IO[str],
    stdout: IO[str],
) -> None:
    """Evaluate one trial per line of ``stdin`` (a :func:`.plan_round` trial as JSON), writing
    one record per line to ``stdout``; the first line written says the worker is ready."""
    from ._trial import evaluate, load_objective

    if not spec.objective:
        raise ShadhoError("the search spec names no objective (objective: module:function)")
    objective = load_objective(spec.objective, search_dirs)
    kwargs: dict[str, Any] = dict(spec.objective_args)
    kwargs["threads"] = spec.classes[hw_class].cpus
    state = _template_state(spec, search_dirs)
    if state is not None:
        kwargs["state"] = state
    ready = {"ready": True, "pid": os.getpid(), "job": os.environ.get("SLURM_JOB_ID")}
    stdout.write(json.dumps(ready) + "\n")
    stdout.flush()
    for line in stdin:
        if not line.strip():
            continue
        trial = json.loads(line)
        record = evaluate(objective, trial, **kwargs)
        stdout.write(json.dumps(record) + "\n")
        stdout.flush()


def _template_state(spec: SearchSpec, search_dirs: Sequence[str]) -> Any:
    """The spec's sticky template state, built once in this worker (the workflow's
    ``sticky_templates.py``), or None when the spec names none or stickyinvoc is absent."""
    if not spec.sticky_template:
        return None
    try:
        from stickyinvoc._templates import find_templates_file, load_templates
    except ImportError:
        return None
    for folder in search_dirs:
        path = find_templates_file(folder)
        if path is None:
            continue
        templates = load_templates(path)
        if spec.sticky_template in templates:
            return templates[spec.sticky_template]()
    return None


# --- The driver ---


class Worker:
    """One worker process of a class, driven over its pipes."""

    def __init__(self, hw_class: str, argv: Sequence[str], env: Mapping[str, str]) -> None:
        self.hw_class = hw_class
        self.argv = list(argv)
        self.proc = subprocess.Popen(
            self.argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=dict(env),
        )
        self.ready: Optional[dict[str, Any]] = None

    def wait_ready(self) -> None:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            code = self.proc.wait()
            raise ShadhoError(
                f"worker of class {self.hw_class} ended before it was ready (exit {code}; "
                f"command: {shlex.join(self.argv)})"
            )
        self.ready = json.loads(line)

    def run(self, trial: Mapping[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(trial) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise ShadhoError(
                f"worker of class {self.hw_class} ended during trial {trial['trial']} "
                f"(exit {self.proc.wait()})"
            )
        return dict(json.loads(line))

    def close(self) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()  # srun forwards the kill to its job step
            self.proc.wait()


_RERUN = "a rerun redoes those trials"


def run_search(
    spec: SearchSpec,
    spec_file: str,
    out_dir: "str | os.PathLike[str]",
    search_dirs: Sequence[str] = (),
    launchers: Optional[Mapping[str, Sequence[str]]] = None,
    budget: Optional[int] = None,
    env: Optional[Mapping[str, str]] = None,
    log: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
) -> list[dict[str, Any]]:
    """Run the search asynchronously on its classes' workers; return the history.

    ``budget`` trials in all (default ``spec.budget``), the finished ones in
    ``out_dir/history.jsonl`` counting toward it (a rerun resumes).
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    history_file, plans_file = out / "history.jsonl", out / "plans.json"
    history = read_jsonl(history_file) if history_file.exists() else []
    # Trials an error in the objective failed are redone by a rerun (after the fix).
    history = [r for r in history if not is_undeclared(r)]
    plans = read_json(plans_file) if plans_file.exists() else []
    search = AsyncSearch(spec, history=history)
    search.plans = len(plans)
    total = spec.budget if budget is None else budget
    if len(history) >= total:
        log(f"shadho: {len(history)} trials already finished in {out} (budget {total})")
        return history
    launchers = dict(launchers or {})
    env = {**os.environ, **(env or {})}
    lock = threading.Lock()
    handed = [len(history)]
    errors: list[BaseException] = []
    workers = [
        Worker(
            name,
            [*launchers.get(name, launcher_argv(cls)), *worker_argv(spec_file, name, search_dirs)],
            env,
        )
        for name, cls in spec.classes.items()
        for _ in range(cls.count)
    ]
    log(
        f"shadho: {len(workers)} workers starting ("
        + ", ".join(f"{c.count} {n}" for n, c in spec.classes.items())
        + f"); {len(history)} of {total} trials already finished"
    )
    t0 = time.perf_counter()

    def save() -> None:
        write_jsonl(history_file, search.history)
        if search.last_plan is not None and len(plans) < search.plans:
            plans.append(search.last_plan)
        write_json(plans_file, plans)

    def drive(worker: Worker) -> None:
        try:
            worker.wait_ready()
            while True:
                with lock:
                    if errors or handed[0] >= total:
                        return
                    trial = search.next_for(worker.hw_class)
                    save()
                    handed[0] += 1
                record = worker.run(trial)
                with lock:
                    search.tell(trial, record.get("loss"), float(record.get("duration_s", 0.0)))
                    # The worker's own record (host, cpu_s, error...) over the planned fields.
                    mine = {**search.history[-1], **record, "hw_class": worker.hw_class}
                    search.history[-1] = mine
                    save()
                    done = len(search.history)
                    outcome = (
                        f"loss {record.get('loss')}"
                        if record.get("status") == "ok"
                        else f"failed: {first_line(record)}"
                    )
                    log(
                        f"shadho: {done}/{total} {trial['trial']} on {worker.hw_class}: "
                        f"{outcome} ({time.perf_counter() - t0:.1f} s)"
                    )
                    if is_undeclared(mine):  # where in the objective, as a job's traceback
                        log(textwrap.indent(str(mine.get("error")), "    "))
                    check_failures(search.history, spec.max_failed_trials, _RERUN)
        except BaseException as e:  # noqa: BLE001 - handed to the main thread
            with lock:
                errors.append(e)

    threads = [threading.Thread(target=drive, args=(w,), daemon=True) for w in workers]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        for w in workers:
            w.close()
    if errors:
        error = errors[0]
        if isinstance(error, ShadhoError):
            raise error
        raise ShadhoError(f"the search stopped: {error!r}") from error
    return search.history
