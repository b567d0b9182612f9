"""A retired worker's teardown runs while other jobs run: the files it writes are a worker's,
so a non-sticky job running beside it is still stored in the checkpoint store (it was left
out, blamed for them, before the worker reported its teardown's writes)."""

import textwrap

import pytest

pytestmark = pytest.mark.integration

TEMPLATES = """
import os
import time
from pathlib import Path

from stickyinvoc import template


@template("t")
def t():
    Path("state.txt").write_text("built\\n")  # a job that edits it retires the worker
    yield {}
    time.sleep(1.0)  # while the plain job runs
    Path("teardowns").mkdir(exist_ok=True)
    Path(f"teardowns/{os.getpid()}").write_text("x")
"""

SNAKEFILE = """
rule all:
    input: "plain.txt", expand("out/{i}.txt", i=range(3))

rule plain:
    output: "plain.txt"
    shell: "sleep 6; echo ok > {output}"

rule job:
    output: "out/{i}.txt"
    resources: sticky="t"
    script: "job.py"
"""

JOB = """
from pathlib import Path

if snakemake.wildcards.i == "0":
    Path("state.txt").write_text("edited by job 0\\n")
Path(snakemake.output[0]).write_text(snakemake.wildcards.i)
"""


def test_a_retired_workers_teardown_is_not_blamed_on_a_job_beside_it(tmp_path, run_snakemake):
    for name, text in {"sticky_templates.py": TEMPLATES, "Snakefile": SNAKEFILE}.items():
        (tmp_path / name).write_text(textwrap.dedent(text).lstrip())
    (tmp_path / "job.py").write_text(JOB.lstrip())
    args = ("--sticky-max-workers", "1", "--sticky-checkpoints", str(tmp_path / "ckpt"))
    run = run_snakemake(tmp_path, *args)
    output = run.output
    assert run.returncode == 0, output[-4000:]
    assert "made or used on disk" in output  # job 0 retired its worker: a teardown ran
    assert list((tmp_path / "teardowns").iterdir()), output[-4000:]
    assert "rule plain (plain.txt)" not in output, output[-4000:]  # not blamed
    # job 0 changed state.txt itself: not stored; the plain job and jobs 1 and 2 are
    assert "0 job(s) restored, 3 stored" in output, output[-4000:]
