"""Jobs that do not opt in, under ``--sticky-backend slurm``: Slurm jobs, submitted by
snakemake-executor-plugin-slurm's own ``Executor`` (its sbatch command line, resource
vocabulary, status checks, log handling and job arrays), not by a re-implementation.

That executor reads its settings and common settings from ``workflow.executor_settings`` and
``workflow.executor_plugin``, which in this run belong to the sticky plugin. It is handed a
view of the workflow in which those two are the slurm plugin's; everything else (the DAG,
the scheduler's callbacks, the spawned-job arguments) is the real workflow's.
"""

import asyncio
import dataclasses
import shlex
import time
import typing
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Optional

from . import slurm
from ._slurm_health import Lookup, Outcome, SlurmJobsFallback, SlurmWatch

SLURM_PLUGIN = "slurm"
_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off"}


def parse_slurm_options(text: Optional[str], settings_cls: Any) -> dict[str, Any]:
    """``--sticky-slurm-options``: ``NAME=VALUE ...`` (the plugin's ``--slurm-NAME`` flags
    without the prefix) as keyword arguments of ``settings_cls``.

    Pure; raises ValueError naming the item and the fix."""
    fields = {f.name: f for f in dataclasses.fields(settings_cls)}
    known = ", ".join(sorted(n.replace("_", "-") for n in fields))
    options: dict[str, Any] = {}
    try:
        items = shlex.split(text or "")
    except ValueError as e:
        raise ValueError(f"cannot be split into NAME=VALUE items ({e})") from None
    for item in items:
        name, eq, raw = item.partition("=")
        key = name.strip().removeprefix("--").removeprefix("slurm-").replace("-", "_")
        if not eq or not key:
            raise ValueError(f"{item!r} is not NAME=VALUE (e.g. array-jobs=all)")
        if key not in fields:
            raise ValueError(
                f"{name!r} is not a setting of the slurm executor plugin; known: {known}"
            )
        try:
            options[key] = _convert(raw, fields[key].type)
        except ValueError:
            kind = getattr(_unwrap(fields[key].type), "__name__", "a value")
            raise ValueError(f"{item!r}: {raw!r} is not {kind}") from None
    return options


def _unwrap(kind: Any) -> Any:
    args = [a for a in typing.get_args(kind) if a is not type(None)]
    return args[0] if typing.get_origin(kind) is typing.Union and len(args) == 1 else kind


def _convert(raw: str, kind: Any) -> Any:
    kind = _unwrap(kind)
    if kind is bool:
        if raw.lower() in _TRUE:
            return True
        if raw.lower() in _FALSE:
            return False
        raise ValueError(raw)
    if kind is int:
        return int(raw)
    if kind is float:
        return float(raw)
    if kind is Path:
        return Path(raw)
    return raw


def slurm_settings(text: Optional[str]) -> Any:
    """The slurm plugin's settings for this run's Slurm jobs (ValueError, naming the flag and
    the fix, if the plugin is missing or the options are bad)."""
    try:
        from snakemake_executor_plugin_slurm import ExecutorSettings as SlurmSettings
    except ImportError:
        raise ValueError(
            "--sticky-backend slurm submits the jobs that do not opt in with "
            "snakemake-executor-plugin-slurm, which is not installed: install it "
            "(pip install 'snakemake-executor-plugin-sticky[slurm]')"
        ) from None
    try:
        return SlurmSettings(**parse_slurm_options(text, SlurmSettings))
    except Exception as e:  # ours, or the plugin's own validation in __post_init__
        raise ValueError(f"--sticky-slurm-options {text!r}: {e}") from None


class SlurmWorkflowView:
    """The workflow as the slurm executor must see it: its own settings and plugin."""

    def __init__(self, workflow: Any, executor_settings: Any, executor_plugin: Any) -> None:
        self._workflow = workflow
        self.executor_settings = executor_settings
        self.executor_plugin = executor_plugin

    def __getattr__(self, name: str) -> Any:
        return getattr(self._workflow, name)


def start_slurm_executor(
    workflow: Any, logger: Any, options: Optional[str], watch: Optional[SlurmWatch] = None
) -> Any:
    """snakemake-executor-plugin-slurm's Executor for this run's jobs that do not opt in;
    ``watch``: the run's watch of cluster faults (shared with the pilots)."""
    from snakemake_interface_executor_plugins.registry import ExecutorPluginRegistry

    plugin = ExecutorPluginRegistry().get_plugin(SLURM_PLUGIN)
    view = SlurmWorkflowView(workflow, slurm_settings(options), plugin)
    executor = plugin.executor(view, logger)
    guard_status_checks(executor, logger, watch or SlurmWatch())
    return executor


# ---- status checks when accounting is down ----------------------------------------------------


def look_up_slurm_jobs(job_ids: list[str]) -> dict[str, Lookup]:
    """What slurmctld says of these jobs, without the accounting database: ``squeue`` for all
    of them, then ``scontrol show job`` for each that squeue does not list (through the Slurm
    seam, every command bounded). Once scontrol fails for a job (slurmctld not answering),
    the remaining ones are not asked again in this call."""
    try:
        states, unlisted = slurm.squeue_states(job_ids), "squeue does not list it"
    except slurm.SlurmError as e:
        states, unlisted = {}, str(e)
    seen: dict[str, Lookup] = {}
    scontrol_down: Optional[str] = None
    for job_id in job_ids:
        if states.get(job_id):
            seen[job_id] = Lookup(states[job_id], "squeue")
            continue
        if scontrol_down is not None:
            seen[job_id] = Lookup(None, problem=f"{unlisted}; {scontrol_down}")
            continue
        try:
            found = slurm.scontrol_state(job_id)
        except slurm.SlurmError as e:
            scontrol_down = str(e)
            seen[job_id] = Lookup(None, problem=f"{unlisted}; {scontrol_down}")
            continue
        if found is not None and found[0]:
            seen[job_id] = Lookup(found[0], "scontrol")
        else:
            seen[job_id] = Lookup(
                None, problem=f"{unlisted}; scontrol: no such job (slurmctld forgot it)"
            )
    return seen


def poll_again_soon(executor: Any) -> None:
    """As the stock check does when a job finished: the next status check comes after the
    initial interval again. (It adds 10 s, up to 180 s, after every cycle in which it saw no
    job finish, so jobs it never sees finish, decided here, would slow every check down.)"""
    settings = getattr(getattr(executor, "workflow", None), "executor_settings", None)
    initial = getattr(settings, "init_seconds_before_status_checks", None)
    if initial is not None:
        executor.next_seconds_between_status_checks = initial


def guard_status_checks(
    executor: Any,
    logger: Any,
    watch: SlurmWatch,
    fallback: Optional[SlurmJobsFallback] = None,
    lookup: Callable[[list[str]], dict[str, Lookup]] = look_up_slurm_jobs,
    probe: Callable[[str], Optional[str]] = slurm.accounting_error,
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Keep the stock executor from losing jobs, or watching them forever, when ``sacct``
    fails.

    snakemake-executor-plugin-slurm 2.8 yields nothing from ``check_active_jobs`` once every
    sacct attempt of a cycle failed (its accounting database stopped): every active job then
    silently leaves its watch list and Snakemake waits for it forever; and a job sacct does
    not list is kept watched for ever. Here the run's watch probes accounting (bounded, at
    most every ``watch.accounting_every`` seconds, shared with the pilots: one warning per
    outage for both). Every job the stock check neither kept nor reported, and while
    accounting is down every job it kept, is looked up with ``squeue``/``scontrol`` instead
    and decided by ``fallback`` (:class:`SlurmJobsFallback`): finished jobs are reported
    (success or error, by their state), the others stay watched, and one neither knows fails
    after a deadline with a message naming it."""
    stock = executor.check_active_jobs
    decide = fallback or SlurmJobsFallback()

    def tell(message: Optional[str], warning: bool) -> None:
        if message:
            (logger.warning if warning else logger.info)(message)

    async def probe_accounting(job_id: str) -> None:
        with watch.lock:
            due = watch.probe_due(clock())
        if not due:
            return
        error = await asyncio.to_thread(probe, job_id)
        with watch.lock:
            message = watch.probe_result(clock(), error)
        tell(message, warning=error is not None)

    async def check_active_jobs(active_jobs: list[Any]) -> AsyncIterator[Any]:
        reported: set[int] = set()
        success, error = executor.report_job_success, executor.report_job_error

        def note_success(info: Any) -> None:
            reported.add(id(info))
            success(info)

        def note_error(info: Any, msg: Any = None, **kwargs: Any) -> None:
            reported.add(id(info))
            error(info, msg, **kwargs)

        executor.report_job_success, executor.report_job_error = note_success, note_error
        kept: list[Any] = []
        try:
            async for info in stock(active_jobs):
                kept.append(info)
        finally:
            executor.report_job_success, executor.report_job_error = success, error
        if active_jobs:
            await probe_accounting(str(active_jobs[0].external_jobid))
        with watch.lock:
            down, problem = watch.accounting_down, watch.accounting_problem
        kept_ids = {id(j) for j in kept}
        dropped = [j for j in active_jobs if id(j) not in kept_ids and id(j) not in reported]
        asked = dropped + (kept if down else [])
        for info in kept if not down else []:
            yield info
        if not asked:
            decide.forget_all_but(set())
            return
        ids = [str(j.external_jobid) for j in asked]
        seen = await asyncio.to_thread(lookup, ids)
        now = clock()
        accounting = (problem or "sacct gave no state") if down else "sacct gave no state"
        finished = False
        for job, job_id in zip(asked, ids, strict=True):
            verdict = decide.decide(job_id, seen.get(job_id, Lookup(None)), now, accounting)
            finished = finished or verdict.outcome is not Outcome.WATCH
            if verdict.outcome is Outcome.SUCCESS:
                success(job)
            elif verdict.outcome is Outcome.FAILED:
                logfile = getattr(job, "aux", {}).get("slurm_logfile")
                error(job, msg=verdict.message, aux_logs=[str(logfile)] if logfile else [])
            else:
                yield job  # still queued or running, or unknown for now: keep watching it
        decide.forget_all_but(set(ids))
        if finished:
            poll_again_soon(executor)

    executor.check_active_jobs = check_active_jobs
