"""Snakemake's own process as a traced process: the one place that knows Snakemake internals.

While Snakemake builds the DAG, its process runs workflow code: the Snakefile's top level,
input functions, ``params:`` callables, resource callables, and the helper modules they
import. :func:`trace_snakemake_process` (called by ``--logger distea`` when ``$DISTEA_TRACE``
is set, before the Snakefile is read) makes that code record itself like any traced process,
and brackets each computation Snakemake does *for one job* (``Job.__init__`` expands its
input, ``Job.params`` its parameters, ``Job.resources``, ``log``, ``benchmark``, ``group``
and ``conda_env_spec`` the rest) as a context, written as a ``ctx`` record: the functions
that ran inside are attributed to that job, and the job's start happens after them.

Hooks, all guarded (a Snakemake without them is traced partially, with a one-line notice):

* ``snakemake.workflow.compile``: the Snakefile (and included files) compile with recording
  function bodies and a recorded ``<module>`` body;
* ``snakemake.jobs.Job``: the methods and properties above, wrapped to open a context;
* ``snakemake.executors.local.run_wrapper``: a job's rule code run in this process (the
  generated function behind ``script:``/``shell:``, or ``run:`` with ``--executor local``
  threads) is a context feeding that job's *end*; the programs it starts (its shell
  command, its script's interpreter) are told their job (:func:`distea.tracer.commands_of`)
  and traced as the job's processes;
* ``snakemake.executors.local.Executor.spawn_job``: a ``run:`` job that the local executor
  runs in a Snakemake subprocess is traced there as the job's process.

This is DISTEA's one module that touches Snakemake's internals (a test scans the others).
:data:`SUPPORTED` is the Snakemake range it was tested with: outside it, the Snakemake
process is not traced, with one line saying so (installed version, range, fix), rather than
hooked on guesses.
"""

import functools
import importlib.metadata
import sys
from collections.abc import Callable
from typing import Any, Optional

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from . import _config, tracer
from ._schema import job_key

ROLE = "dag"
"""The role of the Snakemake process's trace (not a hub: its code computes jobs' inputs)."""

_JOB_METHODS = ("_expand_params",)
_REQUIRED = ("snakemake.workflow/snakemake.jobs", "Job.__init__", "Job._expand_params")
_JOB_PROPERTIES = ("resources", "log", "benchmark", "group", "conda_env_spec")

SUPPORTED = ">=9.20,<10"
"""The Snakemake versions whose process DISTEA traces (tested: 9.27.1)."""


def support_problem(installed: Optional[str], supported: str = SUPPORTED) -> Optional[str]:
    """One line saying why the Snakemake process is not traced; None when it is supported.

    Pre-releases inside the range count as inside it; ``10.0.0a1`` is outside ``<10``."""
    try:
        inside = installed is not None and SpecifierSet(supported).contains(
            Version(installed), prereleases=True
        )
    except (InvalidVersion, InvalidSpecifier):
        inside = False
    if inside:
        return None
    return (
        f"distea: Snakemake {installed or '(not installed)'} is outside the supported "
        f"{supported}; its own process is not traced (Snakefile-level code counts as never "
        f"run): pip install 'snakemake{supported}'"
    )


def installed_version() -> Optional[str]:
    """The installed Snakemake's version, from its distribution metadata."""
    try:
        return importlib.metadata.version("snakemake")
    except importlib.metadata.PackageNotFoundError:
        return None


def trace_snakemake_process() -> Optional["tracer.ProcessTrace"]:
    """Start tracing this (Snakemake) process when ``$DISTEA_TRACE`` is set; idempotent."""
    trace = tracer.active()
    if trace is not None:
        return trace if trace.role == ROLE else None
    problem = support_problem(installed_version())
    if problem is not None:
        print(problem, file=sys.stderr)
        return None
    trace = tracer.start(ROLE, workflow_code_reads_only=True)
    if trace is None:
        return None
    missing = _install(trace)
    if any(name in missing for name in _REQUIRED):
        # Code traced here could not be tied to the jobs it computed for: an impact would
        # stop in this process. Record nothing, so that queries say "never ran" instead.
        trace.dump()
        print(
            f"distea: this Snakemake lacks {', '.join(missing)}; its own process is not "
            "traced (Snakefile-level code counts as never run)",
            file=sys.stderr,
        )
        return None
    if missing:
        print(
            f"distea: this Snakemake lacks {', '.join(missing)}; code run there is attributed "
            "to its jobs only through their input and params",
            file=sys.stderr,
        )
    return trace


def _install(trace: "tracer.ProcessTrace") -> list[str]:
    missing: list[str] = []
    try:
        import snakemake.workflow as workflow_module
        from snakemake.jobs import Job
    except ImportError:
        return ["snakemake.workflow/snakemake.jobs"]

    def compile_snakefile(source: Any, filename: Any, mode: str, *args: Any, **kw: Any) -> Any:
        if mode == "exec" and not args and not kw and isinstance(filename, str):
            # The generated rule functions (``__rule_NAME``) stay as written: Snakemake
            # derives a run: block's source from its line table for its code rerun trigger.
            return trace.compile(source, filename, body=True, keep=("__rule_",))
        return compile(source, filename, mode, *args, **kw)

    workflow_module.compile = compile_snakefile  # type: ignore[attr-defined]
    missing += _record_config(trace, workflow_module)

    try:
        import snakemake.executors.local as local
    except ImportError:
        local = None  # type: ignore[assignment]
    run_wrapper = getattr(local, "run_wrapper", None)
    if run_wrapper is None:
        missing.append("snakemake.executors.local.run_wrapper")
    else:

        @functools.wraps(run_wrapper)
        def run_in_context(job_rule: Any, input: Any, output: Any, params: Any, wildcards: Any,
                           *args: Any, **kwargs: Any) -> Any:  # fmt: skip
            key = _run_key(job_rule, wildcards, output)
            token = trace.begin_context()
            try:
                with tracer.commands_of(key):  # its shell command, its script's interpreter
                    return run_wrapper(job_rule, input, output, params, wildcards, *args, **kwargs)
            finally:
                trace.end_context(token, key, to_end=True)

        local.run_wrapper = run_in_context  # type: ignore[union-attr]
    executor_class = getattr(local, "Executor", None)
    spawn_job = getattr(executor_class, "spawn_job", None)
    if spawn_job is None:
        missing.append("snakemake.executors.local.Executor.spawn_job")
    else:

        @functools.wraps(spawn_job)
        def spawn_for_job(self: Any, job: Any) -> Any:
            with tracer.commands_of(_key(job)):  # a run: job in a Snakemake subprocess
                return spawn_job(self, job)

        executor_class.spawn_job = spawn_for_job  # type: ignore[union-attr]
        # spawn_job starts it without an environment of its own: give it one (a copy of
        # this process's, per call: threads share os.environ).
        local.subprocess = _WithEnvironment(local.subprocess)  # type: ignore[union-attr]

    init = Job.__dict__.get("__init__")
    if init is None:
        missing.append("Job.__init__")
    else:

        @functools.wraps(init)
        def job_init(self: Any, *args: Any, **kwargs: Any) -> None:
            token = trace.begin_context()
            try:
                init(self, *args, **kwargs)
            finally:
                trace.end_context(token, _key(self), inputs=True)

        Job.__init__ = job_init  # type: ignore[method-assign]
    for name in _JOB_METHODS:
        method = Job.__dict__.get(name)
        if method is None:
            missing.append(f"Job.{name}")
            continue
        setattr(Job, name, _in_context(trace, method))
    for name in _JOB_PROPERTIES:
        prop = Job.__dict__.get(name)
        if not isinstance(prop, property) or prop.fget is None:
            missing.append(f"Job.{name}")
            continue
        setattr(Job, name, property(_in_context(trace, prop.fget), prop.fset, prop.fdel))
    return missing


def record_config_reads(trace: "tracer.ProcessTrace") -> None:
    """In a Snakemake process that runs one job's ``run:`` code (the local executor's
    subprocess, traced as that job's child): its config reads are logged key by key."""
    try:
        import snakemake.api  # noqa: F401  (first, as Snakemake's entry point does: no cycle)
        import snakemake.workflow as workflow_module
    except ImportError:
        return
    _record_config(trace, workflow_module)


def _record_config(trace: "tracer.ProcessTrace", workflow_module: Any) -> list[str]:
    """The Snakefile's ``config`` reports which keys workflow code reads (inside a job's
    context every read counts: Snakemake formats a job's shell command from it), and each
    config file Snakemake loads is logged key by key."""
    workflow_class = getattr(workflow_module, "Workflow", None)
    include = getattr(workflow_class, "include", None)
    configfile = getattr(workflow_class, "configfile", None)
    if include is None or configfile is None:
        return ["Workflow.include/Workflow.configfile"]

    def note(path: str) -> None:
        # frames: _workflow_frame, note, the recorder's _read/_all, its method, the reader
        if getattr(trace._in_context, "depth", 0) or tracer._workflow_frame(trace, 4):
            trace.note_config(path)

    def recorded(workflow: Any) -> None:
        config = workflow.globals.get("config")
        if isinstance(config, _config.ConfigRecorder):
            _config.record_in_place(config, note)
        elif isinstance(config, dict):
            workflow.globals["config"] = _config.recording_copy(config, note)

    @functools.wraps(include)
    def include_recorded(self: Any, *args: Any, **kwargs: Any) -> Any:
        if trace.snakefile_globals is None and trace.role == ROLE:  # state noted per context
            vanilla = frozenset(getattr(self, "vanilla_globals", None) or ())
            trace.snakefile_globals = (self.globals, vanilla)
            trace.snakefile_rules = lambda: getattr(self, "rules", ())
        recorded(self)
        try:
            return include(self, *args, **kwargs)
        finally:
            recorded(self)

    @functools.wraps(configfile)
    def configfile_recorded(self: Any, fp: Any, *args: Any, **kwargs: Any) -> Any:
        result = configfile(self, fp, *args, **kwargs)
        recorded(self)
        try:
            from snakemake.common.configfile import load_configfile

            trace.note_configfile(str(fp), _config.flatten(load_configfile(fp)))
        except Exception:  # unreadable here: the query then counts every key as changed
            pass
        return result

    setattr(workflow_class, "include", include_recorded)  # noqa: B010
    setattr(workflow_class, "configfile", configfile_recorded)  # noqa: B010
    try:  # Snakemake may write the config as YAML (a dict subclass needs a representer)
        import yaml

        for dumper in (yaml.SafeDumper, yaml.Dumper):
            dumper.add_representer(_config.ConfigRecorder, dumper.represent_dict)
    except ImportError:
        pass
    return []


class _WithEnvironment:
    """``subprocess`` for one Snakemake module: a program started for a job without an
    environment gets a copy of this process's (which the tracer then tells its job)."""

    def __init__(self, module: Any) -> None:
        self._module = module

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._module, name)
        if name not in ("Popen", "run", "call", "check_call", "check_output"):
            return value

        @functools.wraps(value)
        def started(*args: Any, **kwargs: Any) -> Any:
            if kwargs.get("env") is None and tracer.command_job():
                import os

                kwargs["env"] = dict(os.environ)
            return value(*args, **kwargs)

        return started


def _in_context(trace: "tracer.ProcessTrace", method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        token = trace.begin_context()
        try:
            return method(self, *args, **kwargs)
        finally:
            trace.end_context(token, _key(self))

    return wrapper


def _run_key(rule: Any, wildcards: Any, output: Any) -> Optional[str]:
    """The DISTEA key of the job whose rule code ``run_wrapper`` ran."""
    try:
        return job_key(rule.name, dict(wildcards.items()), [str(o) for o in output])
    except Exception:
        return None


def _key(job: Any) -> Optional[str]:
    """The DISTEA key of a (possibly half-built) Snakemake job, None when it has none yet."""
    try:
        rule = job.rule.name
        wildcards = dict(job.wildcards_dict or {})
        outputs = [str(o) for o in job.output]
    except Exception:  # construction failed before the outputs were known
        return None
    return job_key(rule, wildcards, outputs)
