"""Snakemake's own scheduling tests (copied into
``tests/integration/workflows/snakemake_upstream_scheduling``, see its README) with
``--scheduler incremental``: Snakemake's expected results and the checks of its tests.py.
Each runs on the installed Snakemake, and (two of each kind in CI, every one with
``SNAKEMAKE_PATCHED_ALL=1``) on a copy carrying the patch proposed upstream
(``upstream/snakemake``, applied by ``bench/_patched_snakemake.py``), where the scheduler
learns each round's new ready jobs from Snakemake instead of the whole set."""

import os
import shutil
import subprocess
from dataclasses import dataclass
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
    # Snakemake's retries test (one job: its run ends in the first round, before the plugin's
    # loop would start) and checkpoints (jobs added to the DAG while the loop runs)
    "test_retries": (3, []),
    "test_checkpoints": (3, []),
    "test_checkpoints_many": (3, []),
}
LOOP_ENTERED = "scheduler incremental: the schedule loop goes on from this round"
LOOP_HANDED_BACK = "scheduler incremental: the schedule loop handed back"


def run_upstream(
    tmp_path: Path,
    name: str,
    patched: bool = False,
    case: "tuple[int, list[str]] | None" = None,
    workflow: "str | None" = None,
    executor: str = "local",
) -> SnakemakeRun:
    cores, args = case or CASES[name]
    workdir = tmp_path / name
    shutil.copytree(UPSTREAM / (workflow or name), workdir)
    cmd = snakemake_command(
        "--scheduler", "incremental", "--verbose", *args, executor=executor, cores=cores
    )
    if patched:  # python bench/_patched_snakemake.py RSS_FILE ARGS... (instead of -m snakemake)
        assert cmd[1:3] == ["-m", "snakemake"]
        patcher = REPO / "bench" / "_patched_snakemake.py"
        cmd[1:3] = [str(patcher), str(tmp_path / "peak_rss_kib")]
    proc = subprocess.run(cmd, cwd=workdir, capture_output=True, text=True, timeout=240)
    return SnakemakeRun(workdir, proc.returncode, proc.stdout + proc.stderr)


def check_expected_results(run: SnakemakeRun, workflow: str) -> int:
    """Snakemake's check: every file of expected-results produced, byte for byte (.gitkeep and
    .gitignore are placeholders); the number compared."""
    expected = UPSTREAM / workflow / "expected-results"
    compared = 0
    for path in sorted(expected.rglob("*")):
        if path.is_file() and path.name not in (".gitkeep", ".gitignore"):
            produced = run.workdir / path.relative_to(expected)
            assert produced.read_bytes() == path.read_bytes(), f"{produced} differs"
            compared += 1
    return compared


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


# Each run is a Snakemake start of its own (10-15 s here): the copy carrying the upstream
# patch runs two in CI (many jobs through checkpoints; threads against the cores), every one
# with SNAKEMAKE_PATCHED_ALL=1.
PATCHED_ALL = os.environ.get("SNAKEMAKE_PATCHED_ALL") == "1"
PATCHED = ["test_checkpoints_many", "test_github_issue3913"]


def installed_and_patched(names: list[str], patched: list[str]) -> list:
    """Every name on the installed Snakemake, and those in ``patched`` (every one with
    SNAKEMAKE_PATCHED_ALL=1) on the patched copy."""
    return [
        *(pytest.param(name, False, id=f"{name}-installed") for name in names),
        *(
            pytest.param(name, True, id=f"{name}-patched")
            for name in names
            if PATCHED_ALL or name in patched
        ),
    ]


@pytest.mark.parametrize(("name", "patched"), installed_and_patched(list(CASES), PATCHED))
def test_snakemake_scheduling_workflow_passes(tmp_path, name, patched):
    run = run_upstream(tmp_path, name, patched)
    assert run.returncode == 0, run.output[-4000:]
    assert FALLBACK not in run.output  # the plugin chose every round itself
    assert check_expected_results(run, name) > 0
    if name == "test_github_issue3913":
        assert check_issue3913_threads(run.workdir) == 4  # prepare, 2 x do_something, final
    # On the installed Snakemake the plugin goes on with its schedule loop (from the second
    # round that selects) and hands the end back; the patched one keeps its own loop.
    entered = name != "test_retries"  # one job, one round
    assert (LOOP_ENTERED in run.output) == (entered and not patched), name
    assert (LOOP_HANDED_BACK in run.output) == (LOOP_ENTERED in run.output)


RETRIES = """
rule all:
    input: expand("out/{i}.txt", i=range(6))
rule make:
    output: "out/{i}.txt"
    retries: RETRIES
    shell:
        "mkdir -p tries; n=$(cat tries/{wildcards.i} 2>/dev/null || echo 0); "
        "echo $((n + 1)) > tries/{wildcards.i}; "
        "if [ {wildcards.i} = 4 ] && [ $n -lt 2 ]; then exit 1; fi; echo {wildcards.i} > {output}"
"""


@pytest.mark.parametrize("scheduler", ["incremental", "greedy"])
@pytest.mark.parametrize("retries", [2, 1])
def test_retried_jobs_reenter_the_plugins_loop(tmp_path, scheduler, retries):
    """A job fails twice, one job at a time: with two retries it is restarted (back in the
    ready set, seen by the plugin's loop) and the run succeeds; with one the run fails, as
    with Snakemake's greedy scheduler and its own loop. (Snakemake's own test_retries runs a
    single job in one round: the plugin's loop never starts there.)"""
    (tmp_path / "Snakefile").write_text(RETRIES.replace("RETRIES", str(retries)))
    proc = subprocess.run(
        snakemake_command("--scheduler", scheduler, "--verbose", executor="local", cores=1),
        cwd=tmp_path, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    output = proc.stdout + proc.stderr
    assert output.count("Trying to restart job") == retries, output[-3000:]
    assert (tmp_path / "tries" / "4").read_text().strip() == str(retries + 1)
    assert (proc.returncode == 0) == (retries == 2), output[-3000:]
    assert (tmp_path / "out" / "4.txt").exists() == (retries == 2)
    if retries == 2:
        assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
            f"{i}.txt" for i in range(6)
        ]
    assert (LOOP_ENTERED in output) == (scheduler == "incremental")
    assert (LOOP_HANDED_BACK in output) == (scheduler == "incremental")


RETRY_THROUGH_UPDATE = """
import os
rule all:
    input: "bad.txt", "hog.txt", "agg.txt"
rule pre:
    output: "pre.txt"
    shell: "touch {output}"
rule hog:  # ready once pre is done; it takes tok before bad's retry (higher priority)
    input: "pre.txt"
    output: "hog.txt"
    priority: 9
    resources: tok=1
    shell: "sleep 4; touch {output}"
rule bad:  # fails its first attempt at 1 s, succeeds when retried
    output: "bad.txt"
    priority: 5
    resources: tok=1
    shell: "sleep 1; if [ ! -e _attempt1 ]; then touch _attempt1; exit 1; fi; touch {output}"
checkpoint ck:  # finishes at 2 s, while the retry waits for tok: the DAG is updated
    output: directory("ck")
    shell: "sleep 2; mkdir -p {output}; touch {output}/a.txt"
def agg_in(wc):
    d = checkpoints.ck.get().output[0]
    return expand(os.path.join(d, "{n}.txt"), n=glob_wildcards(os.path.join(d, "{n}.txt")).n)
rule agg:
    input: agg_in
    output: "agg.txt"
    shell: "cat {input} > {output}"
"""


def _retry_through_update(tmp_path: Path, scheduler: str) -> "tuple[int, str]":
    (tmp_path / "Snakefile").write_text(RETRY_THROUGH_UPDATE)
    proc = subprocess.run(
        snakemake_command(
            "--scheduler", scheduler, "--resources", "tok=1", "--retries", "1",
            executor="local", cores=3,
        ),
        cwd=tmp_path, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    output = proc.stdout + proc.stderr
    assert output.count("Trying to restart job") == 1, output[-3000:]
    return proc.returncode, output


def test_a_retry_waiting_through_a_checkpoints_update_runs(tmp_path):
    """A job restarted by --retries waits (another job of higher priority holds the resource
    it needs) while a checkpoint finishes and the DAG is updated: the incremental scheduler
    runs the retry, which succeeds (Snakemake 9.27.1 leaves the restarted job in the DAG's
    running set, and the update drops it from the ready set: ``_rounds.keep_restarted``)."""
    rc, output = _retry_through_update(tmp_path, "incremental")
    assert rc == 0, output[-3000:]
    assert (tmp_path / "bad.txt").exists() and (tmp_path / "agg.txt").exists()


@pytest.mark.xfail(
    strict=True,
    reason="Snakemake 9.27.1 loses a retry that waits through a DAG update (the run ends "
    "'At least one job did not complete'); an XPASS means Snakemake fixed it: "
    "_rounds.keep_restarted can go",
)
def test_stock_greedy_runs_a_retry_waiting_through_a_checkpoints_update(tmp_path):
    rc, output = _retry_through_update(tmp_path, "greedy")
    assert rc == 0 and (tmp_path / "bad.txt").exists(), output[-3000:]


KEEP_GOING = """
rule all:
    input: expand("out/{i}.txt", i=range(12))
rule make:
    output: "out/{i}.txt"
    shell: "if [ {wildcards.i} = 3 ]; then exit 1; fi; echo {wildcards.i} > {output}"
"""


@pytest.mark.parametrize("scheduler", ["incremental", "greedy"])
def test_keep_going_runs_every_other_job_in_the_plugins_loop(tmp_path, scheduler):
    """A job fails early with --keep-going: the plugin's loop goes on with the other jobs
    (errors do not hand back while it keeps going), and the run fails at its end, as with
    Snakemake's greedy scheduler and its own loop."""
    (tmp_path / "Snakefile").write_text(KEEP_GOING)
    proc = subprocess.run(
        snakemake_command(
            "--scheduler", scheduler, "--keep-going", "--verbose", executor="local", cores=1
        ),
        cwd=tmp_path, capture_output=True, text=True, timeout=240,
    )  # fmt: skip
    output = proc.stdout + proc.stderr
    assert proc.returncode != 0, output[-3000:]
    made = sorted(int(p.stem) for p in (tmp_path / "out").glob("*.txt"))
    assert made == [i for i in range(12) if i != 3]
    assert (LOOP_ENTERED in output) == (scheduler == "incremental")


# Snakemake's group-job tests (tests/tests.py). Its run(cluster="./qsub") submits through the
# cluster-generic executor, whose ./qsub runs each job script here, at once, and sets nodes=3
# (--jobs 3) and seconds_between_status_checks=0; cores default to 3. Its group_components={0:
# 5} and overwrite_groups={"a": 0, ...} are ints, and a command line gives strings: where a
# Snakefile says `group: 0`, --groups names the same groups as strings, so that
# --group-components finds them (the grouping is the same).
CLUSTER = [
    "--cluster-generic-submit-cmd", "./qsub", "--jobs", "3",
    "--seconds-between-status-checks", "0",
]  # fmt: skip
STATUS_FAILED = ["--cluster-generic-status-cmd", "./status_failed"]
RESOURCE_GROUPS = ["--group-components", "0=5", "1=5", "--groups", "a=0", "a_1=1", "b=2", "c=2"]
PIPE_GROUP = ["--group-components", "0=5", "--groups", "a=0", "a_1=0", "b=0", "c=0"]
MEM_0 = ["--default-resources", "mem_mb=0"]


@dataclass(frozen=True)
class GroupCase:
    """One of Snakemake's group tests: its workflow, cores, arguments beyond CLUSTER, whether
    it must fail, and (for the tests that count qsub.log's lines) the submissions."""

    workflow: str
    cores: int = 3
    args: tuple[str, ...] = ()
    shouldfail: bool = False
    submissions: "int | None" = None


GROUP_CASES = {
    "test_group_jobs": GroupCase("test_group_jobs"),
    "test_group_jobs_attempts": GroupCase("test_group_jobs_attempts", args=("--retries", "2")),
    "test_groups_out_of_jobs": GroupCase("test_groups_out_of_jobs", shouldfail=True),
    "test_group_job_fail": GroupCase("test_group_job_fail", shouldfail=True),
    "test_group_temp": GroupCase("test_group_temp"),
    "test_groupid_expand_cluster": GroupCase("test_groupid_expand_cluster"),
    "test_issue850": GroupCase("test_issue850"),
    "test_issue860": GroupCase("test_issue860", args=("done",)),
    "test_issue930": GroupCase("test_issue930"),
    "test_multicomp_group_jobs": GroupCase(
        "test_multicomp_group_jobs",
        args=("--groups", "a=group0", "b=group0", "--group-components", "group0=2"),
    ),
    # test_group_jobs_resources without its spy on GroupResources.basic_layered (a mock in
    # Snakemake's process): the run and its results.
    "test_group_jobs_resources": GroupCase(
        "test_group_jobs_resources",
        cores=6,
        args=(
            "--resources",
            "typo=23",
            "mem_mb=60000",
            *MEM_0,
            "--group-components",
            "0=5",
            "--groups",
            "a=0",
            "a_1=0",
            "b=0",
            "c=0",
        ),
    ),  # fmt: skip
    "test_group_job_resources_with_pipe_with_too_much_constraint": GroupCase(
        "test_group_with_pipe",
        cores=6,
        args=("--resources", "mem_mb=20000", *PIPE_GROUP, *MEM_0),
        shouldfail=True,
    ),
    "test_group_job_resources_with_pipe_with_too_few_cores": GroupCase(
        "test_group_with_pipe", cores=2, args=(*PIPE_GROUP, *MEM_0), shouldfail=True
    ),
    # The scheduler goes on scheduling group jobs until the global resources are used up; then
    # ./status_failed fails the first, and the run ends: qsub.log counts what was scheduled.
    "test_global_resource_limits_limit_scheduling_of_groups": GroupCase(
        "test_group_jobs_resources",
        cores=6,
        args=(
            *STATUS_FAILED,
            "--resources",
            "typo=23",
            "mem_mb=50000",
            "fake_res=200",
            *RESOURCE_GROUPS,
            *MEM_0,
        ),
        shouldfail=True,
        submissions=1,
    ),  # fmt: skip
    "test_new_resources_can_be_defined_as_local": GroupCase(
        "test_group_jobs_resources",
        cores=6,
        args=(
            *STATUS_FAILED,
            "--resources",
            "typo=23",
            "mem_mb=50000",
            "fake_res=200",
            "global_res=1000",
            "--set-resource-scopes",
            "mem_mb=local",
            "global_res=local",
            *RESOURCE_GROUPS,
            *MEM_0,
        ),
        shouldfail=True,
        submissions=2,
    ),  # fmt: skip
    "test_resource_prefix_does_not_affect_scope_overwrite": GroupCase(
        "test_group_jobs_resources",
        cores=6,
        args=(
            *STATUS_FAILED,
            "--resources",
            "typo=23",
            "mem_mb=50000",
            "fake_res=200",
            "global_res=1000",
            "--set-resource-scopes",
            "mem=local",
            "global_res=local",
            *RESOURCE_GROUPS,
            *MEM_0,
        ),
        shouldfail=True,
        submissions=2,
    ),  # fmt: skip
    "test_resources_can_be_overwritten_as_global": GroupCase(
        "test_group_jobs_resources",
        cores=6,
        args=(
            *STATUS_FAILED,
            "--resources",
            "typo=23",
            "fake_res=200",
            "--set-resource-scopes",
            "fake_res=global",
            *RESOURCE_GROUPS,
            *MEM_0,
        ),
        shouldfail=True,
        submissions=1,
    ),  # fmt: skip
}
# Each group job is a Snakemake start of its own (seconds each): the copy carrying the
# upstream patch runs the two that exercise the most (merged groups, resource limits).
GROUP_PATCHED = ["test_group_jobs", "test_global_resource_limits_limit_scheduling_of_groups"]
GROUP_PARAMS = installed_and_patched(list(GROUP_CASES), GROUP_PATCHED)


@pytest.mark.parametrize(("name", "patched"), GROUP_PARAMS)
def test_snakemake_group_job_workflow_passes(tmp_path, name, patched):
    case = GROUP_CASES[name]
    args = [*CLUSTER, *case.args]
    run = run_upstream(
        tmp_path, name, patched, (case.cores, args), case.workflow, executor="cluster-generic"
    )
    assert FALLBACK not in run.output
    if case.shouldfail:
        assert run.returncode != 0, run.output[-4000:]
    else:
        assert run.returncode == 0, run.output[-4000:]
        assert "Submitted group job" in run.output
        assert check_expected_results(run, case.workflow) > 0
    if case.submissions is not None:
        lines = (run.workdir / "qsub.log").read_text().splitlines()
        assert len([line for line in lines if line]) == case.submissions, lines


# Snakemake's local tests on group workflows: under local execution Snakemake makes no group
# jobs (Rule.group is None), and the scheduler sees single jobs.
LOCAL_GROUP_CASES = {
    "test_groupid_expand_local": ("test_groupid_expand", 3, []),
    "test_cores_limited_by_global_supply": ("test_group_jobs_resources", 1, []),
}


@pytest.mark.parametrize("name", list(LOCAL_GROUP_CASES))
def test_snakemake_local_group_workflow_passes(tmp_path, name):
    workflow, cores, args = LOCAL_GROUP_CASES[name]
    run = run_upstream(tmp_path, name, case=(cores, args), workflow=workflow)
    assert run.returncode == 0, run.output[-4000:]
    assert FALLBACK not in run.output
    assert "Group job" not in run.output
    assert check_expected_results(run, workflow) > 0
