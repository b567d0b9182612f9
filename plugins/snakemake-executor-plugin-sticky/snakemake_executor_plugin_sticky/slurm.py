"""Slurm for sticky pilots: the one seam through which ``sbatch``, ``squeue``, ``scontrol``,
``sacct`` and ``scancel`` run, the resource vocabulary turned into sbatch options, and a table
of Slurm job states.

The resource names are those of ``snakemake-executor-plugin-slurm``, so a template's pilot is
described like any Slurm job in a Snakemake workflow.
"""

import shlex
import subprocess
from enum import Enum
from typing import Any, Optional


class SlurmError(Exception):
    """A Slurm command failed; the message carries the command and what it printed."""


class PilotState(Enum):
    PENDING = "pending"
    RUNNING = "running"
    ENDED = "ended"


STATE_TABLE: dict[str, PilotState] = {
    "PENDING": PilotState.PENDING,
    "CONFIGURING": PilotState.PENDING,
    "REQUEUED": PilotState.PENDING,
    "RESIZING": PilotState.PENDING,
    "SUSPENDED": PilotState.PENDING,
    "RUNNING": PilotState.RUNNING,
    "COMPLETING": PilotState.ENDED,
    "COMPLETED": PilotState.ENDED,
    "CANCELLED": PilotState.ENDED,
    "FAILED": PilotState.ENDED,
    "TIMEOUT": PilotState.ENDED,
    "PREEMPTED": PilotState.ENDED,
    "NODE_FAIL": PilotState.ENDED,
    "BOOT_FAIL": PilotState.ENDED,
    "DEADLINE": PilotState.ENDED,
    "OUT_OF_MEMORY": PilotState.ENDED,
    "REVOKED": PilotState.ENDED,
}
"""Slurm job states (``squeue %T``) mapped onto what the manager needs to know."""

# Options the pilot submission sets itself; slurm_extra may not override them.
MANAGED_OPTIONS = (
    "--job-name",
    "-J",
    "--output",
    "-o",
    "--error",
    "-e",
    "--wrap",
    "--export",
    "--chdir",
    "-D",
    "--parsable",
    "--partition",
    "-p",
    "--account",
    "-A",
    "--time",
    "-t",
    "--mem",
    "--mem-per-cpu",
    "--cpus-per-task",
    "-c",
    "--gpus",
    "-G",
    "--gres",
    "--constraint",
    "-C",
    "--qos",
    # As snakemake-executor-plugin-slurm forbids them: a pilot is one task on one node.
    "--ntasks",
    "-n",
    "--nodes",
    "-N",
    "--clusters",
    "-M",
    "--comment",
    "--workdir",
    "--ntasks-per-gpu",
    "--cpus-per-gpu",
    "--gpus-per-node",
    "--gpus-per-task",
    # The pilot's environment is documented (see _pilot_env); these would replace it.
    "--get-user-env",
    "--export-file",
    "--test-only",
)


PILOT_RESOURCES = (
    "slurm_partition",
    "slurm_account",
    "runtime",
    "mem_mb",
    "mem_mb_per_cpu",
    "cpus_per_task",
    "gpu",
    "gpu_model",
    "gres",
    "constraint",
    "qos",
    "slurm_extra",
)
"""Resource names that describe a pilot (those of snakemake-executor-plugin-slurm)."""


def run_slurm(args: list[str], timeout: float = 30.0, env: Optional[dict[str, str]] = None) -> str:
    """Run one Slurm command; return its standard output or raise :class:`SlurmError`."""
    try:
        proc = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env)
    except FileNotFoundError:
        raise SlurmError(
            f"{args[0]} not found: the sticky Slurm backend needs the Slurm client commands "
            "on PATH (or use --sticky-backend local)"
        ) from None
    except subprocess.TimeoutExpired:
        raise SlurmError(f"{shlex.join(args)} did not answer within {timeout:g} s") from None
    if proc.returncode != 0:
        raise SlurmError(f"{shlex.join(args)} failed: {proc.stderr.strip() or proc.stdout.strip()}")
    return proc.stdout


def sbatch_options(resources: dict[str, Any]) -> list[str]:
    """sbatch options for a pilot described in the Slurm executor plugin's vocabulary.

    >>> sbatch_options({"slurm_partition": "gpu", "gpu": 1, "runtime": 30, "mem_mb": 4000})
    ['--partition=gpu', '--time=30', '--mem=4000', '--gpus=1']
    """
    known = set(PILOT_RESOURCES)
    unknown = sorted(set(resources) - known)
    if unknown:
        raise ValueError(
            f"unknown pilot resource(s) {', '.join(unknown)}; use {', '.join(sorted(known))}"
        )
    opts: list[str] = []
    for key, option in [
        ("slurm_partition", "--partition"),
        ("slurm_account", "--account"),
        ("runtime", "--time"),
        ("mem_mb", "--mem"),
        ("mem_mb_per_cpu", "--mem-per-cpu"),
        ("cpus_per_task", "--cpus-per-task"),
        ("gres", "--gres"),
        ("constraint", "--constraint"),
        ("qos", "--qos"),
    ]:
        if resources.get(key) not in (None, ""):
            opts.append(f"{option}={resources[key]}")
    if resources.get("gpu"):
        model = resources.get("gpu_model")
        opts.append(f"--gpus={model}:{resources['gpu']}" if model else f"--gpus={resources['gpu']}")
    extra = shlex.split(str(resources.get("slurm_extra") or ""))
    for arg in extra:
        name = arg.split("=", 1)[0]
        if name in MANAGED_OPTIONS:
            raise ValueError(
                f"slurm_extra may not set {name}: the sticky executor manages it (use the "
                f"matching resource instead)"
            )
    return opts + extra


def submit(
    *,
    job_name: str,
    output: str,
    workdir: str,
    options: list[str],
    command: list[str],
    env: dict[str, str],
    export: str = "--export=ALL",
) -> str:
    """Submit a pilot; return its job id. sbatch runs with ``env``; ``export`` says which of
    it reaches the job (see :mod:`._pilot_env`). Steps the job starts (``srun``) see all of the
    job's environment again (``SLURM_EXPORT_ENV=ALL``), as in any batch job."""
    args = [
        "sbatch",
        "--parsable",
        f"--job-name={job_name}",
        f"--output={output}",
        f"--chdir={workdir}",
        export,
        *options,
        "--wrap",
        "export SLURM_EXPORT_ENV=ALL; exec " + shlex.join(command),
    ]
    return run_slurm(args, timeout=60, env=env).strip().split(";")[0]


def trial_submit(options: list[str], env: Optional[dict[str, str]] = None) -> Optional[str]:
    """Slurm's verdict on a pilot's options without submitting anything (``sbatch
    --test-only``): None if it would accept them, else what it said."""
    args = ["sbatch", "--test-only", "--job-name=sticky-check", "--output=/dev/null"]
    try:
        run_slurm([*args, *options, "--wrap", "true"], timeout=30, env=env)
    except SlurmError as e:
        if "not found: the sticky Slurm backend" in str(e) or "did not answer" in str(e):
            raise
        return str(e).split(" failed: ", 1)[-1]
    return None


def partitions_output() -> str:
    """``scontrol show partition -o``: one partition per line."""
    return run_slurm(["scontrol", "show", "partition", "-o"], timeout=15)


def config_output() -> str:
    """``scontrol show config``."""
    return run_slurm(["scontrol", "show", "config"], timeout=15)


def scontrol_state(job_id: str) -> Optional[tuple[str, str]]:
    """State and reason of a job from ``scontrol show job`` (slurmctld, no accounting); None
    if slurmctld no longer knows it."""
    try:
        out = run_slurm(["scontrol", "show", "job", "-o", job_id], timeout=15)
    except SlurmError as e:
        if "invalid job id" in str(e).lower():
            return None
        raise
    fields = dict(tok.split("=", 1) for tok in out.split() if "=" in tok)
    return fields.get("JobState", ""), fields.get("Reason", "")


def squeue_states(job_ids: list[str]) -> dict[str, str]:
    """Job id -> state (``squeue %T``) of those of these jobs that slurmctld still knows
    (finished ones for ``MinJobAge``); no accounting needed. Raises :class:`SlurmError` if
    squeue does not answer."""
    if not job_ids:
        return {}
    args = ["squeue", "--noheader", "--states=all", f"--jobs={','.join(job_ids)}"]
    try:
        out = run_slurm([*args, "--format=%i|%T"], timeout=30)
    except SlurmError as e:
        if "invalid job id" in str(e).lower():
            return {}  # squeue answered: it knows none of them (any more)
        raise
    states: dict[str, str] = {}
    for line in out.splitlines():
        job_id, _, state = line.strip().partition("|")
        if job_id:
            states[job_id] = state.split()[0] if state.split() else ""
    return states


def accounting_error(job_id: str = "1") -> Optional[str]:
    """Whether Slurm accounting answers (``sacct``, served by slurmdbd from its database):
    None if it does, else what went wrong, in a line."""
    try:
        proc = subprocess.run(
            ["sacct", "-n", "-X", "-P", "-j", job_id, "-o", "JobID"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except FileNotFoundError:
        return "sacct not found"
    except subprocess.TimeoutExpired:
        return "sacct did not answer within 10 s"
    err = proc.stderr.strip()
    if proc.returncode != 0 or "error" in err.lower():
        return "sacct: " + (err.splitlines()[-1] if err else f"exit status {proc.returncode}")
    return None


def job_states(job_name: str) -> dict[str, tuple[str, str]]:
    """State and reason of every job with this name that squeue still knows."""
    out = run_slurm(
        ["squeue", "--noheader", "--states=all", f"--name={job_name}", "--format=%i|%T|%r"]
    )
    states: dict[str, tuple[str, str]] = {}
    for line in out.splitlines():
        job_id, state, reason = (line.split("|") + ["", ""])[:3]
        states[job_id.strip()] = (state.strip(), reason.strip())
    return states


def cancel(job_ids: list[str]) -> None:
    if job_ids:
        run_slurm(["scancel", *job_ids])


def cancel_by_name(job_name: str) -> None:
    run_slurm(["scancel", f"--name={job_name}"])


def pilot_state(slurm_state: Optional[str]) -> PilotState:
    """Unknown or vanished jobs count as ended: nothing runs that the manager cannot see."""
    return STATE_TABLE.get((slurm_state or "").split()[0] if slurm_state else "", PilotState.ENDED)
