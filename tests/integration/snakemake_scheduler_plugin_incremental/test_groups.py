"""A plain (no pipe) ``group:`` under ``--scheduler incremental``. Snakemake makes group jobs
only for a non-local executor (under ``--executor local`` a rule's group is None), so the
group run submits through the cluster-generic executor, with a submit command that runs each
job script on this machine at once (incremental_groups/submit): each sample's two jobs are one
submission, one Snakemake start. The outputs are those of a local greedy run."""

import pytest

from tests.conftest import SnakemakeRun

pytestmark = pytest.mark.integration

SAMPLES = range(4)
CLUSTER = [
    "--cluster-generic-submit-cmd", "./submit", "--jobs", "2",
    "--seconds-between-status-checks", "0",
]  # fmt: skip


def submission(run: SnakemakeRun, job: str) -> str:
    return run.read(f"where/{job}.txt").strip()


def test_plain_group_jobs_run_as_one_submission_each(workflow, run_snakemake):
    local = run_snakemake(
        workflow("incremental_groups", "local"), "--scheduler", "greedy", executor="local"
    )
    assert local.returncode == 0, local.output
    assert "Group job" not in local.output
    assert {submission(local, f"prepare-{s}") for s in SAMPLES} == {"none"}

    run = run_snakemake(
        workflow("incremental_groups", "grouped"),
        "--scheduler", "incremental", "--verbose", *CLUSTER,
        executor="cluster-generic", cores=2,
    )  # fmt: skip
    assert run.returncode == 0, run.output[-4000:]
    assert "scheduler incremental: falling back" not in run.output
    for name in ["summary.txt", *(f"prep/{s}.txt" for s in SAMPLES)]:
        assert run.read(name) == local.read(name), name
    assert run.read("summary.txt") == "".join(f"{s * s}\n" for s in SAMPLES)

    # One submission per sample's group (prepare and square together), one for summary.
    assert run.output.count("Submitted group job") == len(SAMPLES)
    groups = [submission(run, f"prepare-{s}") for s in SAMPLES]
    assert groups == [submission(run, f"square-{s}") for s in SAMPLES]
    assert len(set(groups)) == len(SAMPLES)
    assert submission(run, "summary") not in groups
    scripts = run.read("submissions.log").splitlines()
    assert len(scripts) == len(SAMPLES) + 1
    assert sum("per_sample" in script for script in scripts) == len(SAMPLES)
