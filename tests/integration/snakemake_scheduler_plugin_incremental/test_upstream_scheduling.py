"""Snakemake's own scheduling tests (copied into
``tests/integration/workflows/snakemake_upstream_scheduling``, see its README) with
``--scheduler incremental``: Snakemake's expected results and the checks of its tests.py.
Each runs twice: on the installed Snakemake, and on a copy carrying the patch proposed
upstream (``upstream/snakemake``, applied by ``bench/_patched_snakemake.py``), where the
scheduler learns each round's new ready jobs from Snakemake instead of the whole set."""

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO, WORKFLOWS, SnakemakeRun, snakemake_command

pytestmark = pytest.mark.integration

UPSTREAM = WORKFLOWS / "snakemake_upstream_scheduling"
FALLBACK = "scheduler incremental: falling back"

# workflow -> (cores, extra arguments), as in Snakemake's tests/tests.py
CASES = {
    "test_scheduler_sequential_all_cores": (90, []),
    "test_github_issue3913": (8, []),
    "test_priority": (1, []),
    "test_pipes": (2, ["--printshellcmds"]),
    "test_pipes2": (2, []),
    "test_pipes_multiple": (5, []),
    "test01": (3, ["--max-jobs-per-timespan", "2/1s"]),
}


def run_upstream(tmp_path: Path, name: str, patched: bool = False) -> SnakemakeRun:
    cores, args = CASES[name]
    workdir = tmp_path / name
    shutil.copytree(UPSTREAM / name, workdir)
    cmd = snakemake_command(
        "--scheduler", "incremental", "--verbose", *args, executor="local", cores=cores
    )
    if patched:  # python bench/_patched_snakemake.py RSS_FILE ARGS... (instead of -m snakemake)
        assert cmd[1:3] == ["-m", "snakemake"]
        patcher = REPO / "bench" / "_patched_snakemake.py"
        cmd[1:3] = [str(patcher), str(tmp_path / "peak_rss_kib")]
    proc = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=240)
    return SnakemakeRun(workdir, proc.returncode, proc.stdout + proc.stderr)


def check_issue3913_threads(workdir: Path, limit: int = 8) -> int:
    """Snakemake's test_github_issue3913: never more threads running than --cores."""
    active: dict[str, int] = {}
    started = 0
    log = next((workdir / ".snakemake" / "log").glob("*.log"))
    jobid, threads = "", 1
    for line in log.read_text().splitlines():
        if line.startswith("    jobid:"):
            jobid, threads = line.split()[-1], 1
        elif line.startswith("    threads"):
            threads = int(line.split()[-1])
        elif line.startswith("    resources:"):
            active[jobid] = threads
            started += 1
        elif line.startswith("Finished jobid:"):
            del active[line.split()[2]]
        if active:
            assert sum(active.values()) <= max(max(active.values()), limit)
    return started


@pytest.mark.parametrize("patched", [False, True], ids=["installed", "patched"])
@pytest.mark.parametrize("name", list(CASES))
def test_snakemake_scheduling_workflow_passes(tmp_path, name, patched):
    run = run_upstream(tmp_path, name, patched)
    assert run.returncode == 0, run.output[-4000:]
    assert FALLBACK not in run.output  # the plugin chose every round itself
    expected = UPSTREAM / name / "expected-results"
    compared = 0
    for path in sorted(expected.rglob("*")):
        if path.is_file():
            produced = run.workdir / path.relative_to(expected)
            assert produced.read_bytes() == path.read_bytes(), f"{produced} differs"
            compared += 1
    assert compared > 0
    if name == "test_github_issue3913":
        assert check_issue3913_threads(run.workdir) == 4  # prepare, 2 x do_something, final
