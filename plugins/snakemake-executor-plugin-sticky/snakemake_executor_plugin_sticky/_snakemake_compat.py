"""The one module of this distribution that touches Snakemake's internals.

Snakemake's plugin interfaces (``snakemake_interface_*``) do not cover everything the sticky
executor needs to behave exactly like ``--executor local``: it embeds Snakemake's own local
executor, builds a ``script:`` job's ``snakemake`` object and source the way the ``script:``
preamble does, writes benchmark records in Snakemake's format, and (with
``--sticky-checkpoints``) asks the DAG which jobs must run and tells it what was restored.
Every such use goes through this module, so that a Snakemake release that moves one of them
breaks here, with one clear line, and nowhere else.

:data:`SUPPORTED` is the Snakemake range this was tested with. :func:`check_snakemake`
(called when the executor starts) refuses any other version, and any missing internal, with
one line naming the installed version, the range and the fix. Importing this module never
fails: an internal that cannot be imported becomes a stand-in that raises that same line when
used, so an unsupported Snakemake can still load the plugin registry (Snakemake imports every
installed plugin on every command) and only ``--executor sticky`` refuses.

``tests/unit/test_snakemake_internals.py`` holds the gate's tests and the scan that keeps every
other module off Snakemake's internals.
"""

import contextvars
import importlib
import importlib.metadata
import os
import sys
import threading
import time
from collections.abc import Iterable
from typing import Any, Optional

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version
from snakemake_interface_common.exceptions import WorkflowError

from snakemake_scheduler_plugin_incremental._rounds import source_digest  # the same digests

SUPPORTED = ">=9.20,<10"
"""The Snakemake versions the sticky executor supports (tested: 9.27.1)."""

FIX = "pip install 'snakemake{range}'"

# Name -> (module, attribute): the internals, imported on first use.
_INTERNALS: dict[str, tuple[str, str]] = {
    "CliException": ("snakemake.exceptions", "CliException"),
    "LocalExecutor": ("snakemake.executors.local", "Executor"),
    "Snakemake": ("snakemake.script", "Snakemake"),
    "get_source": ("snakemake.script", "get_source"),
    "get_snakemake_searchpaths": ("snakemake.script", "get_snakemake_searchpaths"),
    "SourceCache": ("snakemake.sourcecache", "SourceCache"),
    "BenchmarkRecord": ("snakemake.benchmark", "BenchmarkRecord"),
    "write_benchmark_records": ("snakemake.benchmark", "write_benchmark_records"),
    "IoSnakemake": ("snakemake.iocontainers", "Snakemake"),
    "snakemake_logger": ("snakemake.logging", "logger"),
}

# The DAG methods --sticky-checkpoints calls (see the functions below).
_DAG_METHODS = ("needrun_jobs", "toposorted", "reason", "postprocess", "handle_temp")


class UnsupportedSnakemake(WorkflowError):
    """The installed Snakemake is outside :data:`SUPPORTED` or lacks an internal used here."""


# ---- the gate (pure) ----------------------------------------------------------------------


def support_problem(
    installed: Optional[str], supported: str = SUPPORTED, missing: Iterable[str] = ()
) -> Optional[str]:
    """One line saying why ``installed`` cannot run the sticky executor; None if it can.

    Pre-releases inside the range count as inside it (a 9.x release candidate is 9.x); a
    pre-release of the next major (``10.0.0a1``) is outside ``<10``."""
    fix = FIX.format(range=supported)
    if installed is None:
        return f"the sticky executor needs Snakemake {supported}, which is not installed: {fix}"
    try:
        version = Version(installed)
        inside = SpecifierSet(supported).contains(version, prereleases=True)
    except (InvalidVersion, InvalidSpecifier):
        inside = False
    if not inside:
        return (
            f"the sticky executor supports Snakemake {supported}, but Snakemake {installed} is "
            f"installed: {fix} (or a snakemake-executor-plugin-sticky release made for it)"
        )
    missing = sorted(missing)
    if missing:
        return (
            f"Snakemake {installed} lacks {', '.join(missing)}, which the sticky executor uses: "
            f"{fix}, a tested release (this one is inside the range but changed)"
        )
    return None


def installed_version() -> Optional[str]:
    """The installed Snakemake's version, from its distribution metadata."""
    try:
        return importlib.metadata.version("snakemake")
    except importlib.metadata.PackageNotFoundError:
        return None


def check_snakemake(workflow: Any = None) -> None:
    """Refuse to start outside :data:`SUPPORTED`, or if an internal used here is gone (those
    imported, and the DAG methods of ``workflow``'s DAG when given).

    Raised as ``CliException`` when Snakemake has it, which Snakemake prints as the one line
    ``Error: <message>`` (a ``WorkflowError`` would add a traceback of this module)."""
    missing = [".".join(_INTERNALS[name]) for name in _INTERNALS if _resolve(name) is None]
    if workflow is not None:
        missing += dag_missing(workflow)
    problem = support_problem(installed_version(), SUPPORTED, missing)
    if problem is None:
        return
    cli_exception = _resolve("CliException")
    if cli_exception is not None:
        raise cli_exception(problem)
    raise UnsupportedSnakemake(problem)


# ---- the internals, imported on first use ---------------------------------------------------


_resolved: dict[str, Any] = {}


def _resolve(name: str) -> Any:
    """The internal ``name``, or None if this Snakemake has no such thing."""
    if name not in _resolved:
        module_name, attribute = _INTERNALS[name]
        try:
            _resolved[name] = getattr(importlib.import_module(module_name), attribute)
        except (ImportError, AttributeError):
            _resolved[name] = None
    return _resolved[name]


class _Missing:
    """Stands in for an internal this Snakemake lacks: using it raises the gate's line."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        module_name, attribute = _INTERNALS[self.name]
        missing = [f"{module_name}.{attribute}"]
        problem = support_problem(installed_version(), SUPPORTED, missing)
        raise UnsupportedSnakemake(problem or f"{missing[0]} could not be imported")


def __getattr__(name: str) -> Any:
    """``from ._snakemake_compat import LocalExecutor`` and the other internals, lazily."""
    if name not in _INTERNALS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = _resolve(name)
    if value is None:
        if name == "CliException":
            return UnsupportedSnakemake  # still a WorkflowError: printed, just not as one line
        return _Missing(name)
    return value


# ---- small helpers over internals -------------------------------------------------------


def new_source_cache(workflow: Any) -> Any:
    """A source cache like the one a ``script:`` job's preamble reads its script through."""
    source_cache = __getattr__("SourceCache")
    return source_cache(workflow.sourcecache.cache_path, workflow.sourcecache.runtime_cache_path)


class ScriptSources:
    """What a ``script:`` job's preamble reads (``get_source``), once per script of a run.

    Snakemake's source cache copies a script into the run's runtime cache the first time it
    is read (the DAG build reads every job's) and serves that copy for the rest of the run:
    every later read of the same script returns the same bytes. So the answer for a rule's
    script is kept, and each sticky job does not read it (and parse its path with
    smart_open, several times) again. A script path with ``{`` depends on the job's
    wildcards or params and is read per job, as before. ``searchpaths()``: what the
    preamble appends to ``sys.path`` (Snakemake's folder and the ``sys.path`` entries that
    are folders), recomputed when ``sys.path`` changes (which entries are folders is checked
    then, not for every job: a ``sys.path`` entry of the Snakemake process that is created
    as a folder mid-run is not passed on until ``sys.path`` changes again).
    """

    def __init__(self, workflow: Any) -> None:
        self.workflow = workflow
        self._cache: Any = None
        self._sources: dict[tuple[str, str], tuple[Any, ...]] = {}
        self._searchpaths: tuple[tuple[str, ...], list[str]] = ((), [])

    def get(self, rule: Any, script: str, wildcards: Any, params: Any) -> tuple[Any, ...]:
        """``get_source``'s answer for a job of ``rule``: (source file, source, language,
        is_local, cache path)."""
        key = (rule.name, script)
        found = self._sources.get(key)
        if found is not None:
            return found
        if self._cache is None:
            self._cache = new_source_cache(self.workflow)
        answer = tuple(
            __getattr__("get_source")(script, self._cache, rule.basedir, wildcards, params)
        )
        if "{" not in script:
            self._sources[key] = answer
        return answer

    def searchpaths(self) -> list[str]:
        path = tuple(sys.path)
        if path != self._searchpaths[0]:
            self._searchpaths = (path, list(__getattr__("get_snakemake_searchpaths")()))
        return list(self._searchpaths[1])


def script_object(
    output: list[str],
    params: dict[str, Any],
    wildcards: dict[str, str],
    threads: int,
    resources: dict[str, Any],
    rule: str,
    scriptdir: str,
) -> Any:
    """The ``snakemake`` object of an invocation that is not a Snakemake job (SHADHO's
    asynchronous trials run on the sticky runtime): what a ``script:`` preamble builds, from
    plain values; no inputs, logs or config."""
    from snakemake.iocontainers import InputFiles, Log, OutputFiles, Params, ResourceList, Wildcards

    return _resolve("Snakemake")(
        InputFiles(),
        OutputFiles(output),
        Params(fromdict=params),
        Wildcards(fromdict=wildcards),
        threads,
        ResourceList(fromdict=resources),
        Log(),
        {},
        rule,
        None,
        scriptdir,
    )


def default_resources(workflow: Any) -> Any:
    """Snakemake's default resources of this run (every rule's resources start from a copy)."""
    return workflow.resource_settings._parsed_default_resources


def prepare_job(workflow: Any, job: Any) -> None:
    """What Snakemake does before a job runs (output folders, removal of stale outputs)."""
    workflow.async_run(job.prepare())


def pip_deployments_path() -> Optional[str]:
    """The folder Snakemake appends to ``sys.path`` when imported (None if it has none, or if
    Snakemake is not imported in this process)."""
    return getattr(sys.modules.get("snakemake"), "PIP_DEPLOYMENTS_PATH", None)


def loaded_shell() -> Any:
    """``snakemake.shell.shell`` if a job's code imported it in this process, else None."""
    return getattr(sys.modules.get("snakemake.shell"), "shell", None)


def shell_settings() -> tuple[str, str, str]:
    """What Snakemake's ``shell()`` puts around every command of this run: the prefix (as
    ``shell()`` computes it: ``set -euo pipefail; `` for bash unless ``shell.prefix()`` set
    one), the suffix and the executable (``shell.executable()``; empty for /bin/sh)."""
    from snakemake.shell import shell

    prefix = shell._get_process_prefix()  # noqa: SLF001 (Snakemake's own computation)
    return prefix, shell._process_suffix or "", shell.get_executable() or ""  # noqa: SLF001


def user_shell() -> tuple[Optional[str], str, Optional[str]]:
    """The Snakefile's ``shell.prefix()`` (None if it set none), ``shell.suffix()`` and
    ``shell.executable()`` (None: ``/bin/sh``), around a ``script:`` job's interpreter."""
    from snakemake.shell import shell

    suffix = shell._process_suffix or ""  # noqa: SLF001
    return shell._process_prefix, suffix, shell.get_executable()  # noqa: SLF001


def progress_counts(workflow: Any) -> tuple[int, int]:
    """(jobs finished, jobs in the DAG) as Snakemake's progress line counts them; (0, 0)
    where this Snakemake does not keep them so."""
    scheduler: Any = getattr(workflow, "scheduler", None)
    try:
        return int(scheduler.finished_jobs), len(workflow.dag)
    except (AttributeError, TypeError, ValueError):
        return 0, 0


def final_outputs(workflow: Any) -> list[str]:
    """The run's results as Snakemake targets them: the files asked for on the command line
    or the target rules' outputs, and the inputs of a target rule with no outputs (the usual
    ``rule all:``), in order; [] where this Snakemake keeps no target jobs."""
    jobs = getattr(getattr(workflow, "dag", None), "targetjobs", None) or ()
    found: list[str] = []
    for job in sorted(jobs, key=lambda j: str(j.rule)):
        files = job.output if len(job.output) else job.input
        found.extend(str(f) for f in files)
    return list(dict.fromkeys(found))


def terminal_stream_handler(workflow: Any) -> Any:
    """Snakemake's own stream handler when it writes to a terminal and the user asked for
    no per-job detail (``--verbose``, ``--printshellcmds``); else None (a log handler plugin
    writes the stream, or it is a file, a pipe, CI)."""
    import logging

    settings = getattr(workflow, "output_settings", None)
    if settings is None or settings.verbose or settings.printshellcmds or settings.dryrun:
        return None
    for handler in logging.getLogger("snakemake.logging").handlers:
        if getattr(handler, "name", None) != "DefaultStreamHandler":
            continue
        stream = getattr(handler, "stream", None)
        try:
            return handler if stream is not None and stream.isatty() else None
        except (AttributeError, ValueError):
            return None
    return None


def rule_location(workflow: Any, rule: Any) -> str:
    """``rule NAME (line N of FILE)``, N the line of the Snakefile as written: ``rule.lineno``
    counts lines of the Python Snakemake compiled the file to, and ``workflow.linemaps`` maps
    them back (as Snakemake's own error messages do)."""
    line = rule.lineno
    linemap = (getattr(workflow, "linemaps", None) or {}).get(rule.snakefile)
    if linemap and line in linemap:
        line = linemap[line]
    return f"rule {rule.name} (line {line} of {rule.snakefile})"


def module_config(workflow: Any, rule: Any) -> Any:
    """The config a rule's code sees: its Snakemake ``module``'s (``module m: config: ...``)
    for a rule from a module, else the workflow's."""
    namespace = getattr(rule, "module_globals", None)
    if isinstance(namespace, dict) and "config" in namespace:
        return namespace["config"]
    return workflow.config


def snakefile_folders(workflow: Any) -> set[str]:
    """The folders Snakemake put on ``sys.path`` as it read the workflow: the base folder of
    the Snakefile and of each file it included (``Workflow.include`` inserts each local
    one's), as they stand there."""
    folders = set()
    for snakefile in getattr(workflow, "included", ()):
        try:
            folders.add(snakefile.get_basedir().get_path_or_uri(secret_free=False))
        except Exception:  # not a local source file: Snakemake put nothing on sys.path
            continue
    return folders


def wrapper_prefix(workflow: Any) -> Optional[str]:
    """``--wrapper-prefix`` of this run (None: Snakemake's default, the wrappers repository)."""
    return getattr(workflow.workflow_settings, "wrapper_prefix", None)


# ---- the DAG, as --sticky-checkpoints uses it --------------------------------------------


def needrun_jobs(workflow: Any) -> list[Any]:
    """The jobs Snakemake currently wants to run."""
    return list(workflow.dag.needrun_jobs())


def updates_in_place(job: Any) -> bool:
    """Whether a job has an ``update()`` output or a ``before_update()`` input."""
    from snakemake.io import is_flagged

    return any(is_flagged(f, "update") for f in job.output) or any(
        is_flagged(f, "before_update") for f in job.input
    )


def all_jobs(workflow: Any) -> list[Any]:
    """Every job of the run's DAG, up to date or not."""
    return list(workflow.dag.jobs)


def toposorted(workflow: Any, jobs: set[Any]) -> Iterable[Iterable[Any]]:
    """``jobs`` in layers, each after everything it depends on."""
    layers: Iterable[Iterable[Any]] = workflow.dag.toposorted(jobs)
    return layers


def dependencies(workflow: Any, job: Any) -> Iterable[Any]:
    """The jobs ``job`` takes input from."""
    upstream: Iterable[Any] = workflow.dag.dependencies[job]
    return upstream


def is_forced(workflow: Any, job: Any) -> bool:
    """Whether the user forced the job to run (``-R``, ``-F``, ``--forcerun``)."""
    return bool(workflow.dag.reason(job).forced)


def mark_finished(workflow: Any, jobs: Iterable[Any]) -> None:
    """Write the jobs' Snakemake metadata as after a run (their outputs are in place), one
    after another in one pass of Snakemake's event loop (a pass per job cost about as much as
    writing the metadata: issue 26's restored repeat)."""

    async def finish_all() -> None:
        for job in jobs:
            await workflow.persistence.finished(job)

    workflow.async_run(finish_all())


def recompute_needrun(workflow: Any, jobs: Iterable[Any], restored: Iterable[Any]) -> None:
    """After outputs were restored: forget why ``jobs`` had to run, let Snakemake decide again
    with its own rules, and let it remove ``temp()`` inputs the ``restored`` jobs consumed."""
    dag = workflow.dag
    for job in jobs:
        dag.reason(job).clear()
    # postprocess() adds the mutexes of update()/before_update() files again, and refuses a
    # job that has one already ("Resource update_file_... already exists"): drop them first.
    for job in dag.jobs:
        aux = getattr(job, "_aux_resources", None)
        if isinstance(aux, dict) and any(k.startswith("update_file_") for k in aux):
            for name in [k for k in aux if k.startswith("update_file_")]:
                del aux[name]
            job._resources = None  # recomputed with the mutexes postprocess adds back
    workflow.async_run(dag.postprocess(update_needrun=True))

    async def handle_temps() -> None:  # one pass of the event loop, not one per job
        for job in restored:
            await dag.handle_temp(job)

    workflow.async_run(handle_temps())


def keep_needrun(workflow: Any, jobs: Iterable[Any], restored: Iterable[Any]) -> list[Any]:
    """Of ``jobs`` (a fresh run's jobs that were not restored), those Snakemake no longer runs
    after the restore, made to run again, as in a fresh run, where the restored jobs ran
    before them: a job with no output of its own (a ``rule all:`` with only a ``log:``) runs
    there because its input was updated in the run, which a restore does not count as (Snakemake's
    ``test_github_issue2142``). Returns the jobs put back."""
    dag = workflow.dag
    restored = set(restored)
    # A rule with nothing to run and nothing to write (`rule all: input: ...`) changes
    # nothing by running: left as Snakemake decided ("Nothing to be done").
    back = [
        job
        for job in jobs
        if job not in restored
        and not dag.needrun(job)
        and not (job.rule.norun and not job.output and not job.log)
    ]
    if not back:
        return back
    for job in back:
        dag._needrun.add(job)
        files = [f for dep, fs in dag._dependencies[job].items() if dep in restored for f in fs]
        dag.reason(job).updated_input_run.update(files)
        if job.is_checkpoint:
            dag._checkpoint_jobs.add(job)
    for job in dag._needrun:
        dag._n_until_ready[job] = sum(1 for dep in dag._dependencies[job] if dep in dag._needrun)
    dag._len = len(dag._finished | dag._needrun)
    workflow.async_run(dag.postprocess(update_needrun=False))
    return back


def temp_outputs(job: Any) -> list[str]:
    """The ``temp()`` outputs of ``job``."""
    from snakemake.io import is_flagged

    return [str(f) for f in job.output if is_flagged(f, "temp")]


def removable_temps(workflow: Any, files: Iterable[str]) -> list[str]:
    """Of ``temp()`` outputs still on disk at the end of a complete run, those a run would have
    removed by then: not a target (nor derived from one), and ``--notemp`` not given."""
    if workflow.storage_settings.notemp:
        return []
    dag = workflow.dag
    keep = {str(f) for f in dag.targetfiles} | {str(f) for f in dag.derived_targetfiles}
    return [f for f in files if f not in keep and os.path.lexists(f)]


def dag_missing(workflow: Any) -> list[str]:
    """The DAG methods --sticky-checkpoints calls that this Snakemake's DAG lacks."""
    dag = getattr(workflow, "dag", None)
    return [f"DAG.{name}" for name in _DAG_METHODS if not hasattr(dag, name)]


# ---- the scheduler's wake-ups --------------------------------------------------------------


class Wakeups:
    """Snakemake's scheduler wakes itself ``timespan`` seconds after every scheduling round
    (``JobScheduler._schedule_reevalutation``, for ``--max-jobs-per-timespan``), with a new
    non-daemon ``threading.Timer`` each time; a woken round starts the next one, so every
    job-driven round leaves a chain of one round a second that lasts until the run ends (at
    200 invocations about 400 empty rounds, each also starting a thread), and the run's
    process waits for the last timer to expire before it exits.

    A wake-up is needed only when the rate limit held jobs back (no free slot left after
    the round; then at the moment its oldest job leaves the window, when a slot frees) or
    queue input is awaited: then this wakes the scheduler once, from one daemon thread (a
    pending earlier wake-up serves a later request: its round asks again if still limited).
    Otherwise a job's end wakes the scheduler anyway.
    """

    def __init__(self, scheduler: Any) -> None:
        self._scheduler = scheduler
        self._cond = threading.Condition()
        self._due: Optional[float] = None
        self._thread = threading.Thread(target=self._run, name="sticky-wakeups", daemon=True)
        self._thread.start()

    def request(self, delay: float) -> None:
        scheduler = self._scheduler
        limiter = scheduler.job_rate_limiter
        queued = scheduler.workflow.dag.has_unfinished_queue_input_jobs()
        if not queued and limiter is not None:
            if limiter.get_free_jobs() > 0:
                return
            # Held back: the next slot frees when the oldest job of the window leaves it, which
            # can be well before ``delay`` from now (a burst filled the window early).
            started = getattr(limiter, "_jobs", None)
            if started:
                delay = min(delay, max(0.0, started[0] + limiter.timespan - time.time()))
        due = time.monotonic() + delay
        with self._cond:
            if self._due is None or due < self._due:
                self._due = due
                self._cond.notify()

    def _run(self) -> None:
        with self._cond:
            while True:
                if self._due is None:
                    self._cond.wait()
                    continue
                left = self._due - time.monotonic()
                if left > 0:
                    self._cond.wait(left)
                    continue
                self._due = None
                self._scheduler._open_jobs.release()  # noqa: SLF001 (what the Timer did)


def quiet_wakeups(workflow: Any) -> bool:
    """Replace the scheduler's per-round wake-up timers by :class:`Wakeups`; False (and
    nothing changed) where this Snakemake's scheduler lacks what it needs."""
    scheduler = getattr(workflow, "scheduler", None)
    needed = ("_schedule_reevalutation", "_open_jobs", "job_rate_limiter")
    if scheduler is None or not all(hasattr(scheduler, n) for n in needed):
        return False
    if isinstance(getattr(scheduler, "_sticky_wakeups", None), Wakeups):
        return True
    wakeups = Wakeups(scheduler)
    scheduler._sticky_wakeups = wakeups
    scheduler._schedule_reevalutation = wakeups.request
    return True


JOB_SOURCES = {"prepare": "fd2d6313296170e4", "is_pipe_or_service_input": "e1e6678cceb7fe9e"}
"""Digests (sha256 of ``inspect.getsource``, 16 hex digits) of the ``Job`` methods that
:func:`quick_pipe_lookups` wraps, as in Snakemake 9.27.1; ``tests/unit/
test_snakemake_internals.py`` checks them against the installed Snakemake."""

_MANY_DEPENDENCIES = 64
_PIPE_LOOKUP: "contextvars.ContextVar[Optional[tuple[Any, dict[Any, Any]]]]" = (
    contextvars.ContextVar("sticky_pipe_lookup", default=None)
)


def quick_pipe_lookups(job_class: Any = None) -> bool:
    """Make the aggregating job's ``Job.prepare`` linear, with the same answers: it asks
    ``is_pipe_or_service_input`` for each of its n inputs, and each call walks the job's
    dependencies until one holds the file, O(n^2) for a ``rule all`` over n jobs (15 s at
    16,000 jobs, about 25 minutes at 150,000; docs/scale.md). While a job with many
    dependencies prepares, each file's first dependency (the one the walk would stop at) is
    found in one pass, and the question is answered from it. Installed once per process, and
    only on the Snakemake whose two methods it was written against (their source's digest);
    False, and nothing changed, elsewhere. ``job_class``: Snakemake's ``Job`` by default."""
    Job = job_class
    if Job is None:
        try:
            Job = importlib.import_module("snakemake.jobs").Job
        except (ImportError, AttributeError):
            return False
    if getattr(Job.prepare, "_sticky_quick", False):
        return True
    if any(source_digest(getattr(Job, n, None)) != d for n, d in JOB_SOURCES.items()):
        return False
    prepare, is_pipe = Job.prepare, Job.is_pipe_or_service_input

    async def quick_prepare(self: Any) -> Any:
        dependencies = self.dag.dependencies[self]
        if len(dependencies) < _MANY_DEPENDENCIES:
            return await prepare(self)
        first: dict[Any, Any] = {}
        for dep, files in dependencies.items():
            for f in files:
                first.setdefault(f, dep)
        token = _PIPE_LOOKUP.set((self, first))
        try:
            return await prepare(self)
        finally:
            _PIPE_LOOKUP.reset(token)

    def quick_is_pipe(self: Any, path: Any) -> bool:
        active = _PIPE_LOOKUP.get()
        if active is None or active[0] is not self:
            return bool(is_pipe(self, path))
        dep = active[1].get(path)
        return dep is not None and path in dep.pipe_or_service_output

    quick_prepare._sticky_quick = True  # type: ignore[attr-defined]
    quick_prepare.__wrapped__ = prepare  # type: ignore[attr-defined]
    quick_is_pipe.__wrapped__ = is_pipe  # type: ignore[attr-defined]
    Job.prepare = quick_prepare  # type: ignore[method-assign]
    Job.is_pipe_or_service_input = quick_is_pipe  # type: ignore[method-assign]
    return True


def workflow_already_read() -> bool:
    """Whether this process has read a Snakefile already (a workflow with rules or included
    files), without importing Snakemake: the checkpoint keys' process state is measured from
    the moment the plugin is imported, which the command line does before reading it."""
    module = sys.modules.get("snakemake.workflow")
    workflow = getattr(module, "workflow", None) if module is not None else None
    if workflow is None:
        return False
    try:
        return bool(list(getattr(workflow, "rules", ()))) or bool(
            list(getattr(workflow, "included", ()))
        )
    except Exception:  # an unexpected shape: assume it was read (keys stay whole)
        return True
