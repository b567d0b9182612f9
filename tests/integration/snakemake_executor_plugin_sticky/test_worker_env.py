"""A shell that exports BLAS thread counts (as HPC modules do) leaves fork mode on: the
template builds single-threaded, and each job sees its own ``threads`` as under
``--executor local``."""

from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

TEMPLATES = """
from stickyinvoc import template


@template("np")
def np_template():
    import numpy

    return {"a": numpy.arange(4)}
"""

SNAKEFILE = """
rule all:
    input: expand("out/{i}.txt", i=range(3))

rule one:
    output: "out/{i}.txt"
    threads: 1
    resources: sticky="np"
    script: "job.py"
"""

JOB = """
import os
import stickyinvoc

stickyinvoc.state(snakemake)
with open(snakemake.output[0], "w") as f:
    f.write(f"{os.getpid()} {os.environ['OPENBLAS_NUM_THREADS']} {os.environ['OMP_NUM_THREADS']}")
"""


def test_a_shells_blas_threads_do_not_turn_fork_mode_off(tmp_path: Path, run_snakemake):
    for name, text in (("sticky_templates.py", TEMPLATES), ("Snakefile", SNAKEFILE)):
        (tmp_path / name).write_text(text)
    (tmp_path / "job.py").write_text(JOB)
    run = run_snakemake(
        tmp_path, cores=1, env={"OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "4"}
    )
    assert run.returncode == 0, run.output
    assert "direct mode" not in run.output
    jobs = [(tmp_path / "out" / f"{i}.txt").read_text().split() for i in range(3)]
    assert len({pid for pid, _, _ in jobs}) == 3  # each job in its own forked child
    assert all(threads == ["1", "1"] for _, *threads in jobs)  # the job's threads: 1
