"""Snakemake internals stay behind one adapter per distribution, with a supported-version gate.

The gate's decisions are pure (a version string and a range in, one line or None out); the
scan reads this checkout's plugin sources as syntax trees. Nothing here starts a process.
"""

import ast
from pathlib import Path
from types import SimpleNamespace

import pytest
from snakemake.exceptions import CliException

from distea import _snakemake as distea_adapter
from snakemake_executor_plugin_sticky import _snakemake_compat as compat

PLUGINS = Path(__file__).resolve().parents[2] / "plugins"

ADAPTERS = {
    "snakemake-executor-plugin-sticky/snakemake_executor_plugin_sticky/_snakemake_compat.py",
    "snakemake-logger-plugin-distea/distea/_snakemake.py",
    "snakemake-scheduler-plugin-incremental/snakemake_scheduler_plugin_incremental/_rounds.py",
}
"""The modules allowed to reach Snakemake's internals (one per distribution that needs any)."""

INTERNAL_ATTRIBUTES = {"dag", "async_run", "sourcecache", "_parsed_default_resources"}
"""Workflow members outside Snakemake's plugin interfaces (the DAG, its event loop, its
source cache, its parsed default resources): only the adapters may use them."""

INTERFACE_DAG = "snakemake-scheduler-plugin-incremental/"
"""A scheduler plugin's ``self.dag`` is its plugin interface (``SchedulerBase.dag``, a
``DAGSchedulerInterface``), not the workflow's DAG."""


# ---- the sticky executor's gate ---------------------------------------------------------


@pytest.mark.parametrize("version", ["9.20.0", "9.27.1", "9.99.3", "9.30.0rc1"])
def test_versions_inside_the_range_start(version):
    """Every 9.x from 9.20 on passes, a 9.x release candidate too."""
    assert compat.support_problem(version, ">=9.20,<10") is None


@pytest.mark.parametrize("version", ["10.0.0", "10.0.0a1", "9.19.3", "8.30.0", "not-a-version"])
def test_versions_outside_the_range_get_one_line_with_version_range_and_fix(version):
    """The line names the installed version, the supported range and the pip command."""
    line = compat.support_problem(version, ">=9.20,<10")
    assert line is not None and "\n" not in line
    assert f"Snakemake {version} is installed" in line
    assert "supports Snakemake >=9.20,<10" in line
    assert "pip install 'snakemake>=9.20,<10'" in line


def test_no_snakemake_installed_is_named():
    line = compat.support_problem(None, ">=9.20,<10")
    assert line is not None and "not installed" in line and "pip install" in line


def test_missing_internals_inside_the_range_are_named():
    """A release inside the range that moved an internal is refused, naming what it lacks."""
    line = compat.support_problem("9.40.0", ">=9.20,<10", ["snakemake.script.get_source"])
    assert line is not None and "\n" not in line
    assert "Snakemake 9.40.0 lacks snakemake.script.get_source" in line


def test_the_installed_snakemake_is_supported():
    """The tested installation passes the gate, DAG methods included."""
    dag = SimpleNamespace(**{name: None for name in compat._DAG_METHODS})
    compat.check_snakemake(SimpleNamespace(dag=dag))


def test_the_gate_raises_the_one_line_cli_error(monkeypatch):
    """Outside the range the executor refuses with a CliException (Snakemake prints it as
    ``Error: <line>``, without a traceback)."""
    monkeypatch.setattr(compat, "installed_version", lambda: "10.1.0")
    with pytest.raises(CliException, match=r"Snakemake 10\.1\.0 is installed"):
        compat.check_snakemake()


def test_a_dag_without_a_method_is_refused():
    dag = SimpleNamespace(needrun_jobs=None, toposorted=None, reason=None, postprocess=None)
    with pytest.raises(CliException, match=r"lacks DAG\.handle_temp"):
        compat.check_snakemake(SimpleNamespace(dag=dag))


def test_a_missing_internal_is_a_stand_in_that_refuses_when_used(monkeypatch):
    """Importing the adapter never fails (Snakemake imports every plugin on every command);
    an internal this Snakemake lacks raises the gate's line when used, and the gate names it."""
    monkeypatch.setitem(compat._INTERNALS, "LocalExecutor", ("snakemake.no_such_module", "X"))
    monkeypatch.setattr(compat, "_resolved", {})
    stand_in = compat.LocalExecutor
    with pytest.raises(compat.UnsupportedSnakemake, match=r"lacks snakemake\.no_such_module\.X"):
        stand_in(None, None)
    with pytest.raises(CliException, match=r"lacks snakemake\.no_such_module\.X"):
        compat.check_snakemake()


def test_the_adapter_exports_the_real_internals():
    from snakemake.executors.local import Executor
    from snakemake.script import get_source

    assert compat.LocalExecutor is Executor and compat.get_source is get_source
    with pytest.raises(AttributeError):
        compat.no_such_internal  # noqa: B018


# ---- DISTEA's gate -----------------------------------------------------------------------


def test_distea_traces_supported_versions_only():
    assert distea_adapter.support_problem("9.27.1", ">=9.20,<10") is None
    line = distea_adapter.support_problem("10.0.0", ">=9.20,<10")
    assert line is not None and "\n" not in line
    assert "Snakemake 10.0.0 is outside the supported >=9.20,<10" in line
    assert "not traced" in line and "pip install 'snakemake>=9.20,<10'" in line
    assert "(not installed)" in (distea_adapter.support_problem(None) or "")


def test_distea_does_not_trace_an_unsupported_snakemake(monkeypatch, capsys):
    """Outside the range nothing is hooked: one line on stderr, no trace started."""
    monkeypatch.setattr(distea_adapter, "installed_version", lambda: "10.0.0")
    monkeypatch.setattr(distea_adapter.tracer, "active", lambda: None)
    started = []
    monkeypatch.setattr(distea_adapter.tracer, "start", lambda *a, **k: started.append(a))
    assert distea_adapter.trace_snakemake_process() is None
    assert started == []
    assert "Snakemake 10.0.0 is outside the supported" in capsys.readouterr().err


# ---- the scan: no other module touches Snakemake's internals -----------------------------


MODULE_LOOKUPS = {"get", "import_module", "find_spec", "__import__", "reload"}
"""Calls that take a module's name (``sys.modules.get``, ``importlib.import_module``, ...)."""


def _is_internal_module(name: str) -> bool:
    return name == "snakemake" or name.startswith("snakemake.")


def _module_name(node: ast.AST) -> str:
    """A ``"snakemake.X"`` string constant's value, else "" (a logger's name is not a call
    that looks a module up, so only the calls above and subscripts are read)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value if node.value.startswith("snakemake.") else ""
    return ""


def _called_name(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")


def internal_uses(source: str) -> list[str]:
    """Where ``source`` reaches Snakemake's internals: imports of ``snakemake``/``snakemake.*``
    (not ``snakemake_interface_*``), ``"snakemake.X"`` module names handed to a call
    (``sys.modules.get``, ``importlib.import_module``), and workflow internals by attribute."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names if _is_internal_module(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if _is_internal_module(node.module):
                found.append(f"from {node.module} import ...")
        elif isinstance(node, ast.Call) and _called_name(node) in MODULE_LOOKUPS:
            found += [f"call with {name!r}" for name in map(_module_name, node.args) if name]
        elif isinstance(node, ast.Subscript) and _module_name(node.slice):
            found.append(f"subscript {_module_name(node.slice)!r}")
        elif isinstance(node, ast.Attribute) and node.attr in INTERNAL_ATTRIBUTES:
            found.append(f".{node.attr}")
    return found


def test_the_scan_sees_every_kind_of_use():
    """The scan can fail: each way of reaching an internal is reported, interfaces are not."""
    source = "\n".join(
        [
            "import snakemake.io",
            "import snakemake",
            "from snakemake.jobs import Job",
            "from snakemake import shell",
            "import sys, importlib",
            "sys.modules.get('snakemake.shell')",
            "importlib.import_module('snakemake.dag')",
            "workflow.dag.needrun_jobs()",
            "workflow.async_run(job.prepare())",
            "from snakemake_interface_common.exceptions import WorkflowError",
            "import snakemake_interface_executor_plugins",
            "from .snakemake import x",
            "sys.modules.get('snakemake')",
            "sys.modules['snakemake.script']",
            "logging.getLogger('snakemake.sticky')",
        ]
    )
    assert sorted(internal_uses(source)) == sorted(
        [
            "import snakemake.io",
            "import snakemake",
            "from snakemake.jobs import ...",
            "from snakemake import ...",
            "call with 'snakemake.shell'",
            "call with 'snakemake.dag'",
            "subscript 'snakemake.script'",
            ".dag",
            ".async_run",
        ]
    )


def test_only_the_adapters_touch_snakemake_internals():
    """Every plugin module but the listed adapters uses Snakemake through its plugin
    interfaces only. (Workflow scripts shipped as package data run as Snakemake jobs and
    use the ``snakemake`` object they are given; they import nothing from Snakemake.)"""
    offenders = {}
    sources = sorted(PLUGINS.rglob("*.py"))
    assert len(sources) > 50, "the scan found too few plugin modules: wrong folder?"
    for path in sources:
        relative = path.relative_to(PLUGINS).as_posix()
        if relative in ADAPTERS:
            continue
        uses = internal_uses(path.read_text(encoding="utf-8"))
        if relative.startswith(INTERFACE_DAG):
            uses = [u for u in uses if u != ".dag"]
        if uses:
            offenders[relative] = uses
    assert offenders == {}, (
        "Snakemake internals outside the adapters; route them through "
        f"{' or '.join(sorted(ADAPTERS))}: {offenders}"
    )


def test_the_adapters_exist_and_do_use_internals():
    """The allow-list names real files that really need it (a stale entry would hide one)."""
    for relative in ADAPTERS:
        assert internal_uses((PLUGINS / relative).read_text(encoding="utf-8")), relative


# ---- the scheduler's wake-ups (compat.Wakeups) ---------------------------------------------


def _scheduler(free: int, queued: bool = False):
    """A stand-in with what Wakeups uses of Snakemake's JobScheduler (the real one's rate
    limiter: ``get_free_jobs``; its semaphore)."""
    import threading

    limiter = SimpleNamespace(get_free_jobs=lambda: free, timespan=1)
    dag = SimpleNamespace(has_unfinished_queue_input_jobs=lambda: queued)
    return SimpleNamespace(
        job_rate_limiter=limiter,
        workflow=SimpleNamespace(dag=dag),
        _open_jobs=threading.Semaphore(0),
        _schedule_reevalutation=None,
    )


def test_no_wake_up_while_the_rate_limit_has_room():
    scheduler = _scheduler(free=5)
    assert compat.quiet_wakeups(SimpleNamespace(scheduler=scheduler))
    scheduler._schedule_reevalutation(0.01)
    assert not scheduler._open_jobs.acquire(timeout=0.2)  # a job's end wakes it instead


@pytest.mark.parametrize("free, queued", [(0, False), (3, True)])
def test_a_held_back_round_or_queue_input_wakes_the_scheduler_once(free, queued):
    scheduler = _scheduler(free=free, queued=queued)
    assert compat.quiet_wakeups(SimpleNamespace(scheduler=scheduler))
    for _ in range(5):  # five rounds ask: one pending wake-up serves them all
        scheduler._schedule_reevalutation(0.05)
    assert scheduler._open_jobs.acquire(timeout=2)
    assert not scheduler._open_jobs.acquire(timeout=0.3)


def test_the_earliest_wake_up_wins_and_installing_twice_keeps_one():
    scheduler = _scheduler(free=0)
    workflow = SimpleNamespace(scheduler=scheduler)
    assert compat.quiet_wakeups(workflow)
    wakeups = scheduler._sticky_wakeups
    assert compat.quiet_wakeups(workflow) and scheduler._sticky_wakeups is wakeups
    scheduler._schedule_reevalutation(30)
    scheduler._schedule_reevalutation(0.05)
    assert scheduler._open_jobs.acquire(timeout=2)  # not after 30 s


def test_a_scheduler_without_the_internals_is_left_alone():
    assert not compat.quiet_wakeups(SimpleNamespace(scheduler=None))
    assert not compat.quiet_wakeups(SimpleNamespace(scheduler=SimpleNamespace(_open_jobs=1)))


def test_the_real_scheduler_has_what_wakeups_replace():
    from snakemake.scheduling.job_scheduler import JobRateLimiter, JobScheduler

    assert callable(JobScheduler._schedule_reevalutation)
    assert callable(JobRateLimiter.get_free_jobs)


def test_a_held_back_round_wakes_when_the_oldest_job_leaves_the_window():
    """A burst filled the rate limit's window early: the next slot frees when its oldest job
    leaves the window, not a whole timespan after the held-back round."""
    import collections
    import time

    scheduler = _scheduler(free=0)
    scheduler.job_rate_limiter._jobs = collections.deque([time.time() - 0.95])
    assert compat.quiet_wakeups(SimpleNamespace(scheduler=scheduler))
    started = time.monotonic()
    scheduler._schedule_reevalutation(1)
    assert scheduler._open_jobs.acquire(timeout=2)
    assert time.monotonic() - started < 0.5  # about 0.05 s, not 1 s


# ---- the incremental scheduler's per-round selection (_rounds) ----------------------------


def test_the_round_selector_is_written_against_the_installed_snakemake():
    """_rounds replaces JobScheduler.job_selector only where its source is the one it was
    written against: a Snakemake upgrade that changes it fails here until _rounds is checked
    against the new code (and KNOWN_SOURCES updated), while users keep Snakemake's own."""
    from snakemake.scheduling.job_scheduler import JobScheduler

    from snakemake_scheduler_plugin_incremental import _rounds

    found = {
        name: _rounds.source_digest(getattr(JobScheduler, name)) for name in _rounds.KNOWN_SOURCES
    }
    assert found == _rounds.KNOWN_SOURCES
    assert _rounds.replaceable(object.__new__(JobScheduler))


# ---- the aggregating job's prepare (quick_pipe_lookups) ------------------------------------


def test_the_quick_pipe_lookups_are_written_against_the_installed_snakemake():
    from snakemake.jobs import Job

    found = {name: compat.source_digest(getattr(Job, name)) for name in compat.JOB_SOURCES}
    assert found == compat.JOB_SOURCES


class _Dependency:
    def __init__(self, name, pipes=()):
        self.name, self.pipe_or_service_output = name, set(pipes)


class _PreparingJob:
    """What Snakemake 9.27.1's Job.prepare asks (its comprehension over the inputs) and its
    is_pipe_or_service_input, verbatim."""

    def __init__(self, dag, inputs):
        self.dag, self.input = dag, inputs

    async def prepare(self):
        return {f for f in self.input if self.is_pipe_or_service_input(f)}

    def is_pipe_or_service_input(self, path) -> bool:
        for dep, files in self.dag.dependencies[self].items():
            if path in files:
                return path in dep.pipe_or_service_output
        return False


@pytest.mark.parametrize("n", [3, 200])
def test_quick_pipe_lookups_answer_as_the_walk_does(monkeypatch, n):
    """Few or many dependencies; a file two dependencies hold (the first decides, as the walk
    stops there), pipes, and an input no dependency holds."""
    import asyncio
    import random

    rng = random.Random(n)
    deps = {}
    for i in range(n):
        files = {f"f{i}", f"f{rng.randrange(n)}"}
        deps[_Dependency(f"d{i}", {f for f in files if rng.random() < 0.3})] = files
    inputs = [f"f{i}" for i in range(n)] + ["source.txt"]

    class Job(_PreparingJob):
        pass

    job = Job(SimpleNamespace(), inputs)
    job.dag.dependencies = {job: deps}
    expected = asyncio.run(_PreparingJob.prepare(job))
    sources = {name: compat.source_digest(getattr(Job, name)) for name in compat.JOB_SOURCES}
    monkeypatch.setattr(compat, "JOB_SOURCES", sources)
    assert compat.quick_pipe_lookups(Job)
    assert compat.quick_pipe_lookups(Job)  # installed once
    assert asyncio.run(Job.prepare(job)) == expected
    assert expected or n == 3
    outside = [f for f in inputs if Job.is_pipe_or_service_input(job, f)]  # not preparing
    assert set(outside) == expected


def test_quick_pipe_lookups_leave_another_snakemake_alone(monkeypatch):
    class Job(_PreparingJob):
        pass

    original = Job.prepare
    assert not compat.quick_pipe_lookups(Job)  # its sources are not 9.27.1's
    assert Job.prepare is original


def test_the_schedule_loop_and_every_user_of_the_ready_set_are_pinned():
    """_rounds.RoundLoop goes on with JobScheduler.schedule's loop and relies on every change
    to the DAG's ready set going through a set method its TrackedReadySet sees: the loop and
    every function of the installed Snakemake that mentions ``_ready_jobs`` (found in its
    sources, so a new one fails here) are pinned by digest (DAG.__init__ creates the set,
    before the loop replaces it)."""
    import snakemake
    import snakemake.api  # noqa: F401 (import order)
    from snakemake.dag import DAG
    from snakemake.scheduling.job_scheduler import JobScheduler

    from snakemake_scheduler_plugin_incremental import _rounds

    root = Path(snakemake.__file__).parent
    users = set()
    for path in sorted(root.rglob("*.py")):
        source = path.read_text()
        if "_ready_jobs" not in source:
            continue
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ClassDef):
                for item in node.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        if "_ready_jobs" in (ast.get_source_segment(source, item) or ""):
                            users.add(f"{node.name}.{item.name}")
    assert users - {"DAG.__init__"} == set(_rounds.LOOP_SOURCES) - {"JobScheduler.schedule"}
    assert _rounds.loop_digests(JobScheduler, DAG) == _rounds.LOOP_SOURCES
