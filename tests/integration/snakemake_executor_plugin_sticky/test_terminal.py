"""Issue 31, part 4: on a terminal, a sticky run shows one updating progress line instead of
Snakemake's per-job blocks, and ends naming its results; ``--printshellcmds`` (or a stream
that is not a terminal) keeps the per-job lines. Runs snakemake under a pseudo-terminal."""

import os
import pty
import select
import subprocess
from pathlib import Path

import pytest

from tests.conftest import snakemake_command

pytestmark = pytest.mark.integration

TARGETS = ("out/exit0.txt", "out/gilwait.txt", "--config", "seconds_held=1")
PER_JOB = ("localrule job:", "Finished jobid", "steps (")


def on_a_terminal(workdir: Path, *args: str) -> tuple[int, str]:
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        snakemake_command(*args),
        cwd=workdir,
        stdin=subprocess.DEVNULL,
        stdout=slave,
        stderr=slave,
        close_fds=True,
    )
    os.close(slave)
    out = b""
    while True:
        ready, _, _ = select.select([master], [], [], 0.5)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # the terminal closed: the command ended
                break
            if not data:
                break
            out += data
        elif proc.poll() is not None:
            break
    os.close(master)
    return proc.wait(timeout=120), out.decode(errors="replace")


def test_a_terminal_gets_one_progress_line_and_the_results(workflow):
    wd = workflow("sticky_lifecycle")
    code, out = on_a_terminal(wd, *TARGETS)
    assert code == 0, out[-3000:]
    assert "\rsticky: 1/2 jobs done (50%)" in out, out[-3000:]
    assert "\rsticky: 2/2 jobs done (100%)" in out
    assert not [marker for marker in PER_JOB if marker in out], out[-3000:]
    assert "sticky: results: " in out and "out/exit0.txt" in out
    log = sorted((wd / ".snakemake" / "log").glob("*.snakemake.log"))[-1].read_text()
    assert "Finished jobid" in log, "the log file keeps every line"


def test_printshellcmds_and_a_plain_stream_keep_the_per_job_lines(workflow, run_snakemake):
    wd = workflow("sticky_lifecycle")
    code, out = on_a_terminal(wd, *TARGETS, "--printshellcmds")
    assert code == 0, out[-3000:]
    assert "Finished jobid" in out and "jobs done (" not in out
    plain = workflow("sticky_lifecycle", into="plain")
    run = run_snakemake(plain, *TARGETS)
    assert run.returncode == 0, run.output
    assert "Finished jobid" in run.output and "\r" not in run.output


def test_a_run_with_nothing_to_run_names_its_results(workflow, run_snakemake):
    """Issue 31's red team, case 3: a run whose every job was restored from checkpoints (or
    was up to date) printed no results line, which docs/progress.md promises."""
    wd = workflow("sticky_lifecycle")
    first = run_snakemake(wd, "out/exit0.txt", "--sticky-checkpoints", "ckpt")
    assert first.returncode == 0, first.output
    (wd / "out" / "exit0.txt").unlink()
    again = run_snakemake(wd, "out/exit0.txt", "--sticky-checkpoints", "ckpt")
    assert again.returncode == 0, again.output
    assert "restored 1 job(s) before scheduling" in again.output, again.output
    lines = again.output.splitlines()
    results = lines.index("sticky: results: out/exit0.txt")
    assert results < next(i for i, ln in enumerate(lines) if ln.startswith("Nothing to be done"))
