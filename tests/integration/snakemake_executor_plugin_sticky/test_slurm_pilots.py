"""Sticky workers as pilot jobs on the real single-node Slurm cluster that .ci/run starts
(tests/slurm/start-cluster.sh). Skipped where no cluster answers, unless
STICKY_REQUIRE_SLURM=1 (set by CI) makes a missing cluster a failure."""

import signal
import subprocess
from pathlib import Path

import pytest

from tests.conftest import PILOT_ARGS, pilots, plain_rules_local

pytestmark = [pytest.mark.integration, pytest.mark.slurm]


@pytest.fixture
def workflow(workflow):
    """The test workflows with every rule that does not opt in declared a localrule: these
    tests are about pilots (hybrid Slurm jobs are tested in test_slurm_hybrid.py)."""
    return lambda name, into="wf": plain_rules_local(workflow(name, into))


def queued(workdir: Path) -> list[str]:
    """Pilots of the newest run that Slurm still runs or queues."""
    run_id = sorted((workdir / ".snakemake" / "sticky").iterdir())[-1].name
    out = subprocess.run(
        ["squeue", "-h", f"--name=sticky-{run_id}", "-o", "%i %T"],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout
    return out.split("\n")[:-1]


def with_pilot_resources(wd: Path) -> None:
    """counter pilots go to the cpu partition; other pilots to gpu with one (fake) GPU."""
    templates = wd / "sticky_templates.py"
    text = templates.read_text()
    text = text.replace(
        '@template("counter")',
        '@template("counter", resources={"slurm_partition": "cpu", '
        '"cpus_per_task": 1, "runtime": 10})',
    )
    text = text.replace(
        "@template\ndef other",
        '@template("other", resources={"slurm_partition": "gpu", "gpu": 1})\ndef other',
    )
    templates.write_text(text)


SLURM = PILOT_ARGS


def test_pilots_run_invocations_and_leave_nothing_behind(workflow, run_snakemake):
    wd = workflow("sticky_basic")
    with_pilot_resources(wd)
    run = run_snakemake(wd, *SLURM, "--config", "count=4")
    assert run.returncode == 0, run.output
    assert run.read("out/3.txt") == "3 90\n"
    jobs = pilots(wd)
    assert 1 <= len(jobs) <= 2
    assert all(part == "cpu" and state == "COMPLETED" for part, state in jobs.values()), jobs
    assert queued(wd) == []
    assert all("Slurm job" in r["handle"] for r in run.events("worker_started"))


def test_templates_place_pilots_by_partition(workflow, run_snakemake):
    """Invocations go to pilots of their template's class: gpu pilots for `other`."""
    wd = workflow("sticky_basic")
    with_pilot_resources(wd)
    snakefile = wd / "Snakefile"
    snakefile.write_text(
        snakefile.read_text() + '\n\nrule both:\n    input: expand("other/{i}.txt", i=range(2)), '
        'expand("out/{i}.txt", i=range(2))\n\n'
        'use rule invocation as other_invocation with:\n    output: "other/{i}.txt"\n'
        '    log: "logs/other/{i}.log"\n    benchmark: "benchmarks/other/{i}.tsv"\n'
        '    resources: sticky="other"\n'
    )
    run = run_snakemake(wd, "both", *SLURM, "--config", "count=2")
    assert run.returncode == 0, run.output
    assert run.read("other/1.txt") == "1 300\n"
    started = {r["worker"]: r for r in run.events("worker_started")}
    partitions = {p for p, _ in pilots(wd).values()}
    assert partitions == {"cpu", "gpu"}
    for inv in run.events("invocation"):
        expected = "--partition=gpu" if inv["template"] == "other" else "--partition=cpu"
        assert expected in started[inv["worker"]]["handle"]


def test_scancelled_pilot_loses_nothing(workflow, start_snakemake, poll):
    """scancel the pilot running invocation 1 (preemption): its half-written output goes, the
    invocation runs on another pilot, --retries is not consumed, a replacement is submitted."""
    wd = workflow("sticky_basic")
    with_pilot_resources(wd)
    bg = start_snakemake(wd, *SLURM, "--retries", "0", "--config", "hang_on=[1]", "count=3")
    pid_file = wd / "markers" / "pid-1"
    poll(lambda: pid_file.exists(), 120, "invocation 1 to start")
    pid = int(pid_file.read_text())
    # The pilot (Slurm job) of the worker whose invocation wrote the marker: the invocation
    # runs in a child forked from the worker (fork mode), or in the worker itself (direct).
    parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    worker = next(r["worker"] for r in bg.events("worker_connected") if r["pid"] in (pid, parent))
    handle = next(r["handle"] for r in bg.events("worker_started") if r["worker"] == worker)
    victim = handle.split()[2]
    subprocess.run(["scancel", victim], check=True)
    run = bg.finish()
    assert run.returncode == 0, run.output
    assert run.read("out/1.txt") == "1 30\n"
    assert len(run.events("requeued")) == 1
    (lost,) = run.events("worker_lost")
    assert "the worker was sent SIGTERM" in lost["reason"], lost  # named by its supervisor
    assert pilots(wd)[victim][1].startswith("CANCELLED")
    assert queued(wd) == []


def test_bad_partition_is_a_clear_error_not_a_hang(workflow, run_snakemake):
    wd = workflow("sticky_basic")
    templates = wd / "sticky_templates.py"
    templates.write_text(
        templates.read_text().replace(
            '@template("counter")', '@template("counter", resources={"slurm_partition": "nosuch"})'
        )
    )
    run = run_snakemake(wd, *SLURM, "out/0.txt", timeout=180)
    assert run.returncode != 0
    assert "--partition=nosuch" in run.output
    assert "invalid partition" in run.output.lower()


def test_failed_and_interrupted_runs_leave_no_pilots(
    workflow, run_snakemake, start_snakemake, poll
):
    wd = workflow("sticky_basic")
    failed = run_snakemake(wd, *SLURM, "--config", "fail_on=[0]", "count=2")
    assert failed.returncode != 0
    assert queued(wd) == []

    wd2 = workflow("sticky_basic", "interrupted")
    bg = start_snakemake(
        wd2, *SLURM, "--config", "sleep_on=[0]", "sleep_seconds=120", "count=1", cores=1
    )
    poll(lambda: bg.events("state_built"), 120, "a pilot to build its state")
    bg.proc.send_signal(signal.SIGINT)
    run = bg.finish(timeout=90)
    assert run.returncode != 0
    poll(lambda: queued(wd2) == [], 30, "every pilot to leave the queue")


def test_pilot_pending_forever_times_out_with_slurms_reason(workflow, run_snakemake):
    """A pilot Slurm will not start (here: not before an hour from now) fails its jobs after
    the start timeout, naming the pilot's sbatch options and Slurm's pending reason."""
    wd = workflow("sticky_basic")
    templates = wd / "sticky_templates.py"
    templates.write_text(
        templates.read_text().replace(
            '@template("counter")',
            '@template("counter", resources={"slurm_extra": "--begin=now+3600"})',
        )
    )
    run = run_snakemake(wd, *SLURM, "--sticky-pilot-start-timeout", "3", "out/0.txt", timeout=180)
    assert run.returncode != 0
    assert "did not connect within 3 s" in run.output
    assert "--begin=now+3600" in run.output and "BeginTime" in run.output
    assert queued(wd) == []


GPU_RULE = (
    '\n\nrule mixed:\n    input: expand("gpu/{i}.txt", i=range(2)), '
    'expand("out/{i}.txt", i=range(2))'
    '\n\nuse rule invocation as gpu_invocation with:\n    output: "gpu/{i}.txt"\n'
    '    log: "logs/gpu/{i}.log"\n    benchmark: "benchmarks/gpu/{i}.tsv"\n'
    '    resources: sticky="counter", slurm_partition="gpu", gpu=1\n'
)


def test_rule_resources_choose_the_pilot_class(workflow, run_snakemake):
    """The same template is built on cpu pilots for one rule and on gpu pilots for a rule that
    asks for the gpu partition; each invocation runs on a pilot of its rule's class."""
    wd = workflow("sticky_basic")
    with_pilot_resources(wd)
    (wd / "Snakefile").write_text((wd / "Snakefile").read_text() + GPU_RULE)
    run = run_snakemake(wd, "mixed", *SLURM, "--config", "count=2")
    assert run.returncode == 0, run.output
    started = {r["worker"]: r["handle"] for r in run.events("worker_started")}
    assert {p for p, _ in pilots(wd).values()} == {"cpu", "gpu"}
    for inv in run.events("invocation"):
        wanted = "--partition=gpu" if inv["rule"] == "gpu_invocation" else "--partition=cpu"
        assert wanted in started[inv["worker"]], (inv, started)


def test_template_partitions_are_enforced_before_any_job_runs(workflow, run_snakemake):
    wd = workflow("sticky_basic")
    templates = wd / "sticky_templates.py"
    templates.write_text(
        templates.read_text().replace(
            '@template("counter")', '@template("counter", partitions=["cpu"])'
        )
    )
    (wd / "Snakefile").write_text((wd / "Snakefile").read_text() + GPU_RULE)
    run = run_snakemake(wd, "mixed", *SLURM, "--config", "count=2")
    assert run.returncode != 0
    assert "asks for Slurm partition 'gpu'" in run.output
    assert "'counter' may only be built on: cpu" in run.output
    assert not (wd / "out").exists()
    # Local workers have no partitions: the same workflow runs.
    assert run_snakemake(wd, "mixed", "--config", "count=2").returncode == 0


def test_address_and_secret_never_reach_a_command_line(workflow, start_snakemake, poll):
    """Pilots learn the manager's address and secret from a 0600 file named in their
    environment; neither shows in Slurm's record of the job nor in the worker's command line."""
    import json
    import stat

    wd = workflow("sticky_basic")
    bg = start_snakemake(
        wd, *SLURM, "--config", "sleep_on=[0]", "sleep_seconds=120", "count=1", cores=1
    )
    pid = poll(
        lambda: [r["pid"] for r in bg.events("worker_connected")], 120, "a pilot to connect"
    )[0]
    run_dir = sorted((wd / ".snakemake" / "sticky").iterdir())[-1]
    connection = run_dir / "connection"
    assert stat.S_IMODE(connection.stat().st_mode) == 0o600
    info = json.loads(connection.read_text())
    port = info["connect"].rsplit(":", 1)[1]
    job_id = next(r["handle"] for r in bg.events("worker_started")).split()[2]
    record = subprocess.run(
        ["scontrol", "show", "job", job_id], capture_output=True, text=True, check=True
    ).stdout
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().decode().replace("\0", " ")
    for text in (record, cmdline):
        assert info["secret"] not in text
        assert f":{port}" not in text
    assert "snakemake_executor_plugin_sticky.worker" in cmdline
    bg.proc.send_signal(signal.SIGINT)
    bg.finish(timeout=90)
    assert not connection.exists()  # removed at the end of the run


def test_a_script_that_ends_its_pilots_process_fails_once(workflow, run_snakemake):
    """The lifecycle holds on pilots too: os._exit(1) in a pilot fails that job once with the
    exit status (no requeue, no replacement storm); the other job runs; no pilot is left."""
    wd = workflow("sticky_lifecycle")
    run = run_snakemake(wd, *SLURM, "--keep-going", "out/exit1.txt", "out/plain.txt")
    assert run.returncode != 0
    assert "exit status 1 (os._exit" in run.output, run.output
    assert run.read("out/plain.txt") == "plain\n"
    assert run.events("requeued") == [] and run.events("worker_lost") == []
    assert [r["fate"] for r in run.events("worker_ended")] == ["fail"]
    assert queued(wd) == []
