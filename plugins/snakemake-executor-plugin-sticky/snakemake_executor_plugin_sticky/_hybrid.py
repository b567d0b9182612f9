"""Jobs that do not opt in, under ``--sticky-backend slurm``: Slurm jobs, submitted by
snakemake-executor-plugin-slurm's own ``Executor`` (its sbatch command line, resource
vocabulary, status checks, log handling and job arrays), not by a re-implementation.

That executor reads its settings and common settings from ``workflow.executor_settings`` and
``workflow.executor_plugin``, which in this run belong to the sticky plugin. It is handed a
view of the workflow in which those two are the slurm plugin's; everything else (the DAG,
the scheduler's callbacks, the spawned-job arguments) is the real workflow's.
"""

import dataclasses
import shlex
import subprocess
import typing
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Optional

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


def start_slurm_executor(workflow: Any, logger: Any, options: Optional[str]) -> Any:
    """snakemake-executor-plugin-slurm's Executor for this run's jobs that do not opt in."""
    from snakemake_interface_executor_plugins.registry import ExecutorPluginRegistry

    plugin = ExecutorPluginRegistry().get_plugin(SLURM_PLUGIN)
    view = SlurmWorkflowView(workflow, slurm_settings(options), plugin)
    executor = plugin.executor(view, logger)
    guard_status_checks(executor, logger)
    return executor


# ---- status checks when accounting is down ----------------------------------------------------

FAILED_STATES = frozenset(
    {
        "BOOT_FAIL",
        "CANCELLED",
        "DEADLINE",
        "FAILED",
        "NODE_FAIL",
        "OUT_OF_MEMORY",
        "PREEMPTED",
        "TIMEOUT",
    }
)


def squeue_states(job_ids: list[str]) -> dict[str, str]:
    """Job id -> state from ``squeue`` (slurmctld: works without the accounting database;
    finished jobs stay listed for MinJobAge). Empty if squeue fails or times out."""
    try:
        proc = subprocess.run(
            ["squeue", "-h", "--states=all", "-j", ",".join(job_ids), "-o", "%i|%T"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return {}
    states = {}
    for line in proc.stdout.splitlines():
        job_id, _, state = line.strip().partition("|")
        if job_id:
            states[job_id] = state.split()[0] if state else ""
    return states


def guard_status_checks(
    executor: Any, logger: Any, squeue: Callable[[list[str]], dict[str, str]] = squeue_states
) -> None:
    """Keep the stock executor from losing jobs when ``sacct`` fails.

    snakemake-executor-plugin-slurm 2.8 yields nothing from ``check_active_jobs`` once every
    sacct attempt of a cycle failed (its accounting database stopped): every active job then
    silently leaves its watch list and Snakemake waits for it forever. Here every job the
    stock check neither yielded nor reported is looked up with ``squeue`` instead: finished
    jobs are reported (success or error, by their state), the others stay watched; one
    warning says so."""
    stock = executor.check_active_jobs
    warned = False

    async def check_active_jobs(active_jobs: list[Any]) -> AsyncIterator[Any]:
        nonlocal warned
        reported: set[int] = set()
        success, error = executor.report_job_success, executor.report_job_error

        def note_success(info: Any) -> None:
            reported.add(id(info))
            success(info)

        def note_error(info: Any, msg: Any = None, **kwargs: Any) -> None:
            reported.add(id(info))
            error(info, msg, **kwargs)

        executor.report_job_success, executor.report_job_error = note_success, note_error
        kept: set[int] = set()
        try:
            async for info in stock(active_jobs):
                kept.add(id(info))
                yield info
        finally:
            executor.report_job_success, executor.report_job_error = success, error
        dropped = [j for j in active_jobs if id(j) not in kept and id(j) not in reported]
        if not dropped:
            return
        if not warned:
            warned = True
            logger.warning(
                "sticky: sacct gave no state for Slurm jobs of this run (Slurm accounting "
                "unavailable?); their states come from squeue until it answers again"
            )
        states = squeue([str(j.external_jobid) for j in dropped])
        for job in dropped:
            state = states.get(str(job.external_jobid), "")
            if state == "COMPLETED":
                success(job)
            elif state in FAILED_STATES:
                error(
                    job,
                    msg=f"Slurm job {job.external_jobid} ended {state} (state from squeue: "
                    "sacct failed). ",
                )
            else:
                yield job  # still queued or running, or unknown: keep watching it

    executor.check_active_jobs = check_active_jobs
