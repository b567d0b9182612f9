"""profiles/local selects ``--scheduler incremental``: a sticky run through it gives the
outputs of a plain ``--executor local --scheduler greedy`` run of the same Snakefile."""

import subprocess
import sys

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.integration


def test_profile_local_runs_with_the_incremental_scheduler(workflow, run_snakemake):
    assert "scheduler: incremental" in (REPO / "profiles" / "local" / "config.yaml").read_text()
    local_wd, sticky_wd = workflow("sticky_basic", "local"), workflow("sticky_basic", "sticky")
    local = run_snakemake(
        local_wd, "--scheduler", "greedy", "--config", "count=12", executor="local"
    )
    assert local.returncode == 0, local.output
    cmd = [
        sys.executable, "-m", "snakemake", "--profile", str(REPO / "profiles" / "local"),
        "--nocolor", "--verbose", "--config", "count=12",
    ]  # fmt: skip
    proc = subprocess.run(cmd, cwd=sticky_wd, capture_output=True, text=True, timeout=240)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-4000:]
    assert "scheduler incremental: falling back" not in output
    assert "sticky: 12 invocations (0 failed)" in output
    for name in ["summary.txt", "shell.txt", "run.txt", "plain_script.txt"]:
        assert (local_wd / name).read_bytes() == (sticky_wd / name).read_bytes()
    for i in range(12):
        assert (local_wd / f"out/{i}.txt").read_bytes() == (sticky_wd / f"out/{i}.txt").read_bytes()
