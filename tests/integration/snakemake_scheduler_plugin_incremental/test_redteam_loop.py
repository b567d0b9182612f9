"""The red team's cases for the incremental scheduler's own schedule loop (see
``tests/integration/workflows/redteam_schedule_loop/README.md``): each workflow runs under
``--scheduler greedy`` and ``--scheduler incremental`` (which goes on with Snakemake's loop on
9.27.1), in fresh copies, and the runs must agree: exit status, restarts, the jobs started and
finished, every output file's bytes, no traceback."""

import hashlib
import json
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from tests.conftest import WORKFLOWS, snakemake_command

pytestmark = pytest.mark.integration

CASES = WORKFLOWS / "redteam_schedule_loop"
JOB = re.compile(r"^\s*(?:local)?(?:rule|checkpoint) (\S+):$")


def _run(case: Path, workdir: Path, scheduler: str) -> dict:
    shutil.copytree(case, workdir)
    spec = json.loads((case / "case.json").read_text())
    args = list(spec["args"])
    at = args.index("--cores")  # every case names its cores
    cores = int(args[at + 1])
    del args[at : at + 2]
    cmd = snakemake_command(*args, "--scheduler", scheduler, executor="local", cores=cores)
    proc = subprocess.run(
        cmd, cwd=workdir, capture_output=True, text=True, timeout=spec.get("timeout", 90) + 60
    )
    lines = (proc.stdout + proc.stderr).splitlines()
    started = []
    for i, line in enumerate(lines):
        m = JOB.match(line)
        if m and not (i and lines[i - 1].startswith("Error in")):
            detail = [m.group(1)]
            for follow in lines[i + 1 :]:
                if not follow.startswith("    "):
                    break
                if follow.strip().startswith(("output:", "wildcards:")):
                    detail.append(follow.strip())
            started.append(" | ".join(detail))
    outputs = {
        str(p.relative_to(workdir)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(workdir.rglob("*"))
        if p.is_file()
        and ".snakemake" not in p.parts
        and p.name != "case.json"
        and not p.name.startswith("_")  # the case's own records (start times), checked below
    }
    starts = workdir / "_starts"
    if starts.exists():  # c17: a job's start time each; at most `limit` within any timespan
        limit, span = spec["args"][spec["args"].index("--max-jobs-per-timespan") + 1].split("/")
        times = sorted(float(t) for t in starts.read_text().split())
        n, seconds = int(limit), float(span.rstrip("s"))
        assert times and all(
            b - a >= 0.9 * seconds for a, b in zip(times[:-n], times[n:], strict=True)
        ), times
    return {
        "rc": proc.returncode,
        "restarts": sum("Trying to restart job" in line for line in lines),
        "started": Counter(started),
        "finished": Counter(re.findall(r"Finished jobid: \d+ \(Rule: (\S+)\)", "\n".join(lines))),
        "outputs": outputs,
        "traceback": any("Traceback" in line for line in lines),
        "log": "\n".join(lines[-40:]),
    }


@pytest.mark.parametrize("name", sorted(p.name for p in CASES.iterdir() if p.is_dir()))
def test_the_incremental_scheduler_runs_the_red_teams_case_as_greedy(tmp_path, name):
    greedy = _run(CASES / name, tmp_path / "greedy", "greedy")
    incremental = _run(CASES / name, tmp_path / "incremental", "incremental")
    for key in ("rc", "restarts", "started", "finished", "outputs", "traceback"):
        assert incremental[key] == greedy[key], f"{name}: {key}\n{incremental['log']}"
    assert greedy["started"] and not greedy["traceback"]
