"""Hybrid execution on the real single-node Slurm cluster (tests/slurm/start-cluster.sh):
under --sticky-backend slurm every job runs on the cluster. Sticky jobs are invocations on
pilot jobs; shell:, run: and plain script: jobs are Slurm jobs of snakemake-executor-plugin-
slurm; localrules run on the host running Snakemake. Checked with sacct. Skipped where no
cluster answers, unless STICKY_REQUIRE_SLURM=1 makes a missing cluster a failure."""

import re
import subprocess
import time

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slurm]

# One pilot (the cluster has 2 CPUs: the Slurm jobs need the other) that leaves soon after
# the invocations, status checks every second, small Slurm jobs. The cluster is shared: its
# queue may hold other jobs, hence the generous timeout.
HYBRID = [
    "--sticky-backend",
    "slurm",
    "--jobs",
    "4",
    "--sticky-max-pilots",
    "1",
    "--sticky-idle-timeout",
    "3",
    "--sticky-slurm-options",
    "init-seconds-before-status-checks=1",
    "--seconds-between-status-checks",
    "1",
    "--default-resources",
    "slurm_partition='cpu'",
    "runtime=10",
    "mem_mb=500",
]
OUTPUTS = [
    "out/0.txt",
    "out/1.txt",
    "tmp/0.txt",
    "tmp/1.txt",
    "summary.txt",
    "run.txt",
    "plain_script.txt",
    "gathered.txt",
]
ON_SLURM = ["intermediate-0", "intermediate-1", "summary", "run_rule", "plain_script"]


def accounting(job_ids: list[str], timeout: float = 60.0) -> dict[str, tuple[str, str, str]]:
    """job id -> (name, partition, state) from sacct, once every job is recorded in a final
    state (accounting lags behind the jobs a little); what it has at the deadline otherwise."""
    deadline = time.monotonic() + timeout
    while True:
        out = subprocess.run(
            [
                "sacct",
                "-X",
                "-n",
                "-P",
                "-j",
                ",".join(job_ids),
                "-o",
                "JobID,JobName,Partition,State",
            ],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout
        rows = [line.split("|") for line in out.splitlines() if line]
        jobs = {r[0]: (r[1], r[2], r[3]) for r in rows}
        final = all(
            s.split()[0] not in ("PENDING", "RUNNING", "COMPLETING") for _, _, s in jobs.values()
        )
        if (set(jobs) >= set(job_ids) and final) or time.monotonic() > deadline:
            return jobs
        time.sleep(0.5)


def test_mixed_workflow_runs_entirely_on_the_cluster_with_local_outputs(workflow, run_snakemake):
    wd = workflow("sticky_hybrid")
    run = run_snakemake(wd, *HYBRID, timeout=900)
    assert run.returncode == 0, run.output
    local = workflow("sticky_hybrid", "local")
    baseline = run_snakemake(local, executor="local")
    assert baseline.returncode == 0, baseline.output
    for path in OUTPUTS:
        assert run.read(path) == baseline.read(path), path
    assert all(baseline.read(f"where/{n}.txt") == "here\n" for n in [*ON_SLURM, "gather"])

    # shell:, run: and plain script: jobs ran as Slurm jobs of the slurm plugin (its job name
    # is its run id), the localrule here.
    (slurm_run_id,) = re.findall(r"SLURM run ID: (\S+)", run.output)
    job_ids = {name: run.read(f"where/{name}.txt").strip() for name in ON_SLURM}
    assert all(j.isdigit() for j in job_ids.values()), job_ids
    assert len(set(job_ids.values())) == len(ON_SLURM)
    assert run.read("where/gather.txt") == "here\n"
    jobs = accounting(list(job_ids.values()))
    assert set(jobs) == set(job_ids.values()), jobs
    for name, partition, state in jobs.values():
        assert (name, partition, state) == (slurm_run_id, "cpu", "COMPLETED")

    # Sticky jobs ran as invocations on pilot jobs, which are not those Slurm jobs.
    started = {r["worker"]: r["handle"] for r in run.events("worker_started")}
    invocations = run.events("invocation")
    assert sorted(r["rule"] for r in invocations) == ["invocation", "invocation"]
    assert all(r["ok"] for r in invocations)
    pilot_ids = {started[r["worker"]].split()[2] for r in invocations}
    assert all(started[r["worker"]].startswith("Slurm job ") for r in invocations)
    assert not pilot_ids & set(job_ids.values())
    sticky_run = sorted((wd / ".snakemake" / "sticky").iterdir())[-1].name
    for name, _, state in accounting(sorted(pilot_ids)).values():
        assert name == f"sticky-{sticky_run}"
        assert state.split()[0] in ("COMPLETED", "CANCELLED"), state  # ended at run end


def test_cluster_execution_is_bounded_by_jobs_not_cores(workflow, run_snakemake):
    """As under --executor slurm: --jobs is required (--cores alone bounds nothing remote)."""
    wd = workflow("sticky_hybrid")
    run = run_snakemake(wd, "--sticky-backend", "slurm", timeout=60)
    assert run.returncode != 0
    assert "use --jobs N" in run.output
    assert not (wd / "out").exists()


@pytest.mark.parametrize(
    ("flags", "expected"),
    [
        (
            ["--sticky-slurm-options", "array-jobs=all no-such=1"],
            "--sticky-slurm-options 'array-jobs=all no-such=1': 'no-such' is not a setting of "
            "the slurm executor plugin",
        ),
        (
            ["--sticky-max-pilots", "2,nosuch=1"],
            "--sticky-max-pilots 2,nosuch=1: limits template(s) nosuch, which ",
        ),
        (["--sticky-max-pilots", "0"], "--sticky-max-pilots 0: '0' is not a count of at least 1"),
    ],
)
def test_bad_hybrid_settings_fail_before_any_job_in_one_line(
    workflow, run_snakemake, flags, expected
):
    wd = workflow("sticky_hybrid")
    run = run_snakemake(wd, "--sticky-backend", "slurm", "--jobs", "2", *flags, timeout=60)
    assert run.returncode != 0
    assert expected in run.output, run.output
    assert "Traceback" not in run.output
    assert not (wd / "out").exists() and not (wd / "where").exists()
