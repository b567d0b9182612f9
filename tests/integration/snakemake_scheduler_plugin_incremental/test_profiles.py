"""profiles/local and profiles/slurm-sticky select ``--scheduler incremental``: runs through
the repository's profile files themselves (``snakemake --profile``, no copied arguments)
give the outputs of a plain ``--executor local --scheduler greedy`` run of the same
Snakefile, with the incremental scheduler choosing every round and the sticky executor
running the sticky jobs. The slurm-sticky run is skipped where no Slurm cluster answers,
unless STICKY_REQUIRE_SLURM=1 makes a missing cluster a failure (tests/conftest.py)."""

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, SnakemakeRun, pilots, plain_rules_local

pytestmark = pytest.mark.integration

# ``python -c COUNTED ROUNDS_FILE ARGS...``: the snakemake command line, with one line in
# ROUNDS_FILE per round of the incremental scheduler: "selected", or "fallback" where it left
# the round to greedy. A run under another scheduler writes none.
COUNTED = """
import runpy, sys
from snakemake_scheduler_plugin_incremental import Scheduler
rounds, select = sys.argv.pop(1), Scheduler.select_jobs
def counted(self, *args, **kwargs):
    selected = select(self, *args, **kwargs)
    with open(rounds, "a") as f:
        f.write("fallback\\n" if selected is None else "selected\\n")
    return selected
Scheduler.select_jobs = counted
sys.argv[0] = "snakemake"
runpy.run_module("snakemake", run_name="__main__", alter_sys=True)
"""


def run_profile(workdir: Path, profile: str, *args: str, timeout: float = 240) -> SnakemakeRun:
    """``snakemake --profile profiles/PROFILE ARGS`` in ``workdir``; the incremental
    scheduler's rounds in ``workdir/rounds.txt``."""
    cmd = [
        sys.executable, "-c", COUNTED, str(workdir / "rounds.txt"),
        "--profile", str(REPO / "profiles" / profile), "--nocolor", "--verbose", *args,
    ]  # fmt: skip
    proc = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=timeout)
    return SnakemakeRun(workdir, proc.returncode, proc.stdout + proc.stderr)


def incremental_rounds(run: SnakemakeRun) -> list[str]:
    rounds = run.workdir / "rounds.txt"
    return rounds.read_text().split() if rounds.exists() else []


def assert_loop_ran(run: SnakemakeRun) -> None:
    """On the installed Snakemake (9.27.1) the plugin ran the schedule loop itself from its
    second selecting round and handed the end back (_rounds.RoundLoop; --verbose logs it)."""
    assert "scheduler incremental: the schedule loop goes on from this round" in run.output
    assert "scheduler incremental: the schedule loop handed back" in run.output


def outputs(workdir: Path) -> dict[str, bytes]:
    """Every file the workflow wrote (not Snakemake's, nor the record of where jobs ran)."""
    skip = (".snakemake", "where", "logs", "rounds.txt")
    return {
        str(p.relative_to(workdir)): p.read_bytes()
        for p in sorted(workdir.rglob("*"))
        if p.is_file() and p.relative_to(workdir).parts[0] not in skip
    }


def test_profile_local_runs_with_the_incremental_scheduler(workflow, run_snakemake):
    assert "scheduler: incremental" in (REPO / "profiles" / "local" / "config.yaml").read_text()
    local_wd, sticky_wd = workflow("sticky_basic", "local"), workflow("sticky_basic", "sticky")
    local = run_snakemake(
        local_wd, "--scheduler", "greedy", "--config", "count=12", executor="local"
    )
    assert local.returncode == 0, local.output
    run = run_profile(sticky_wd, "local", "--config", "count=12")
    assert run.returncode == 0, run.output[-4000:]
    assert "scheduler incremental: falling back" not in run.output
    rounds = incremental_rounds(run)
    assert rounds and set(rounds) == {"selected"}, rounds
    assert_loop_ran(run)
    assert "sticky: 12 invocations (0 failed)" in run.output
    for name in ["summary.txt", "shell.txt", "run.txt", "plain_script.txt"]:
        assert (local_wd / name).read_bytes() == (sticky_wd / name).read_bytes()
    for i in range(12):
        assert (local_wd / f"out/{i}.txt").read_bytes() == (sticky_wd / f"out/{i}.txt").read_bytes()


@pytest.mark.slurm
def test_profile_slurm_sticky_runs_with_the_incremental_scheduler(workflow, run_snakemake):
    """The sticky jobs run as invocations on a Slurm pilot job (every other rule is declared
    a localrule, see plain_rules_local: Slurm jobs of the hybrid backend are tested in
    test_slurm_hybrid.py)."""
    config = (REPO / "profiles" / "slurm-sticky" / "config.yaml").read_text()
    assert "scheduler: incremental" in config and "executor: sticky" in config
    wd = plain_rules_local(workflow("sticky_hybrid", "sticky"))
    local = plain_rules_local(workflow("sticky_hybrid", "local"))
    baseline = run_snakemake(local, "--scheduler", "greedy", executor="local")
    assert baseline.returncode == 0, baseline.output
    run = run_profile(wd, "slurm-sticky", timeout=900)
    assert run.returncode == 0, run.output[-4000:]
    assert "scheduler incremental: falling back" not in run.output
    rounds = incremental_rounds(run)
    assert rounds and set(rounds) == {"selected"}, rounds
    assert_loop_ran(run)
    produced = outputs(wd)
    assert produced == outputs(local) and "gathered.txt" in produced

    # The sticky jobs ran as invocations on a pilot job of this run, which ended with it.
    invocations = run.events("invocation")
    assert sorted(r["rule"] for r in invocations) == ["invocation", "invocation"]
    assert all(r["ok"] for r in invocations)
    started = {r["worker"]: r["handle"] for r in run.events("worker_started")}
    assert all(started[r["worker"]].startswith("Slurm job ") for r in invocations)
    jobs = pilots(wd)
    assert {started[r["worker"]].split()[2] for r in invocations} <= set(jobs)
    for partition, state in jobs.values():
        assert partition == "cpu"
        assert state.split()[0] in ("COMPLETED", "CANCELLED"), state
