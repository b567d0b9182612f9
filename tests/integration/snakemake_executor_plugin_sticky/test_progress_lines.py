"""What a user sees: progress while a template builds, one line before the jobs and one after,
and the supported-Snakemake gate refusing with one line."""

import re
import subprocess
import sys

import pytest

from tests.conftest import snakemake_command

pytestmark = pytest.mark.integration


def test_a_slow_build_shows_progress_and_the_run_is_summed_up_first_and_last(
    workflow, run_snakemake
):
    """A template that takes 5 s to build is named while it builds (worker, template, elapsed);
    the start line comes before the first job, the run summary after the last one."""
    wd = workflow("sticky_basic")
    run = run_snakemake(wd, "--config", "count=3", env={"TEST_TEMPLATE_SECONDS": "5"}, cores=1)
    assert run.returncode == 0, run.output
    lines = run.output.splitlines()

    progress = [i for i, x in enumerate(lines) if re.search(r"sticky: worker \S+ building", x)]
    assert progress, run.output
    assert re.fullmatch(
        r"sticky: worker (\S+) building template 'counter' \((\d+) s\)", lines[progress[0]]
    ), lines[progress[0]]
    (built,) = run.events("state_built")
    assert lines[progress[0]].split()[2] == built["worker"]
    assert 3 <= int(re.findall(r"\((\d+) s\)", lines[progress[0]])[0]) <= 5

    (start,) = [i for i, x in enumerate(lines) if x.startswith("sticky: ") and "to run:" in x]
    assert re.fullmatch(
        r"sticky: \d+ job\(s\) to run: 3 as invocations of 1 template\(s\) \('counter' 3\) on up "
        r"to 1 local worker\(s\), \d+ through the local executor",
        lines[start],
    ), lines[start]
    (end,) = [i for i, x in enumerate(lines) if x.startswith("sticky: run summary:")]
    assert lines[end].startswith(
        "sticky: run summary: 3 invocation(s) (0 failed) on 1 worker(s), 2 on a warm template; "
        "1 template build(s), "
    ), lines[end]
    jobs = [i for i, x in enumerate(lines) if x.startswith(("rule ", "localrule ", "Finished"))]
    assert jobs and start < min(jobs) and end > max(jobs), run.output
    assert start < progress[0] < end


def test_an_unsupported_snakemake_is_refused_in_one_line(workflow):
    """Snakemake reporting itself as 10.0.0 (the one thing faked here) gets one line naming
    the version, the supported range and the fix, before any job runs."""
    wd = workflow("sticky_basic")
    fake = (
        "import importlib.metadata as m, sys; real = m.version; "
        "m.version = lambda name: '10.0.0' if name == 'snakemake' else real(name); "
        "from snakemake.cli import main; sys.argv[0] = 'snakemake'; main()"
    )
    command = [sys.executable, "-c", fake, *snakemake_command()[3:]]
    proc = subprocess.run(command, cwd=wd, capture_output=True, text=True, timeout=120)
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0
    (line,) = [x for x in output.splitlines() if "Snakemake 10.0.0" in x]
    assert line == (
        "Error: the sticky executor supports Snakemake >=9.20,<10, but Snakemake 10.0.0 is "
        "installed: pip install 'snakemake>=9.20,<10' (or a snakemake-executor-plugin-sticky "
        "release made for it)"
    )
    assert "Traceback" not in output
    assert not (wd / "out").exists()
