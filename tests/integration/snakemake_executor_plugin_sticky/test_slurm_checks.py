"""Issue 18 parts 3-5 on the real single-node Slurm cluster (tests/slurm/start-cluster.sh):
pilot options refused before anything is submitted, the pilots' documented environment, and
pilots and hybrid Slurm jobs that keep running while Slurm accounting (MariaDB behind
slurmdbd) is down.

Skipped where no cluster answers, unless STICKY_REQUIRE_SLURM=1 (CI). The accounting fault
stops MariaDB: it runs only where STICKY_REQUIRE_SLURM=1 or STICKY_SLURM_FAULTS=1 (never by
accident on a cluster others use), and always restarts it."""

import datetime
import json
import os
import shutil
import signal
import subprocess
import textwrap
import time
from pathlib import Path

import pytest

from snakemake_executor_plugin_sticky import slurm
from tests.conftest import PILOT_ARGS, WORKFLOWS, plain_rules_local

pytestmark = [pytest.mark.integration, pytest.mark.slurm]

SLURM = PILOT_ARGS


@pytest.fixture
def workflow(workflow):
    """The test workflows with their rules that do not opt in run here: these tests are about
    pilots (hybrid Slurm jobs are tested in test_slurm_hybrid.py)."""
    return lambda name, into="wf": plain_rules_local(workflow(name, into))


def with_templates(wd: Path, counter: str, other: str = "") -> None:
    """Give the sticky_basic templates these resources= (Python literals)."""
    templates = wd / "sticky_templates.py"
    text = templates.read_text().replace(
        '@template("counter")', f'@template("counter", resources={counter})'
    )
    if other:
        text = text.replace(
            "@template\ndef other", f'@template("other", resources={other})\ndef other'
        )
    templates.write_text(text)


def test_refused_pilot_options_stop_the_run_before_anything_is_submitted(workflow, run_snakemake):
    """Four kinds of refusal in one run, each one line naming template, option and fix:
    by form (runtime), by the cluster's facts (partition, gres), and by sbatch --test-only
    itself (an option sbatch does not know, a node feature no node has). Nothing runs,
    nothing is submitted, no traceback."""
    wd = workflow("sticky_basic")
    with_templates(
        wd,
        '{"slurm_partition": "nosuch"}',
        '{"slurm_partition": "gpu", "gres": "shard:1", "runtime": "1h"}',
    )
    snakefile = wd / "Snakefile"
    snakefile.write_text(
        snakefile.read_text()
        + '\n\nuse rule invocation as featured with:\n    output: "feat/{i}.txt"\n'
        '    log: "logs/feat/{i}.log"\n    benchmark: "benchmarks/feat/{i}.tsv"\n'
        '    resources: sticky="counter", slurm_partition="cpu", constraint="nosuchfeature"\n'
        '\n\nuse rule invocation as extra with:\n    output: "extra/{i}.txt"\n'
        '    log: "logs/extra/{i}.log"\n    benchmark: "benchmarks/extra/{i}.tsv"\n'
        '    resources: sticky="counter", slurm_partition="cpu", slurm_extra="--frobnicate"\n'
    )
    run = run_snakemake(wd, *SLURM, "--config", "count=2", timeout=120)
    assert run.returncode != 0
    out = run.output
    assert "sticky pilot options would be refused by Slurm; nothing was submitted" in out, out
    assert (
        "sticky template 'counter' (pilots of rule invocation): slurm_partition='nosuch' "
        "(--partition=nosuch): invalid partition: this cluster has cpu, gpu; set "
        "slurm_partition to one of them (in resources= of @template('counter'))"
    ) in out, out
    assert "sticky template 'other': runtime='1h': not a time Slurm accepts" in out, out
    assert (
        "sticky template 'counter' (pilots of rule featured): constraint='nosuchfeature': "
        "sbatch refuses it: "
    ) in out, out
    assert "(in the resources of rule featured)" in out, out
    assert (
        "sticky template 'counter' (pilots of rule extra): slurm_extra='--frobnicate': "
        "sbatch refuses it: "
    ) in out, out
    assert "remove or correct --frobnicate (in the resources of rule extra" in out, out
    assert "Traceback" not in out and 'File "' not in out, out
    assert not (wd / "out").exists() and not (wd / "shell.txt").exists()
    assert not (wd / ".snakemake" / "sticky").exists()  # no manager, no pilot ever submitted


def test_gres_the_cluster_does_not_define_is_refused_before_submit(workflow, run_snakemake):
    wd = workflow("sticky_basic")
    with_templates(wd, '{"slurm_partition": "cpu", "gres": "shard:1"}')
    run = run_snakemake(wd, *SLURM, "out/0.txt", timeout=120)
    assert run.returncode != 0
    assert "gres='shard:1': this cluster defines no gres 'shard' (GresTypes: gpu)" in run.output
    assert not (wd / ".snakemake" / "sticky").exists()


ENV_WORKFLOW = {
    "Snakefile": """
        envvars: "STICKY_TEST_NEEDED"

        rule env:
            output: "env.json"
            resources: sticky="probe"
            script: "env.py"
        """,
    "sticky_templates.py": """
        from stickyinvoc import template

        @template("probe", resources={"slurm_partition": "cpu", "runtime": 10})
        def probe():
            return {}
        """,
    "env.py": """
        import json, os
        with open(snakemake.output[0], "w") as f:
            json.dump(dict(os.environ), f)
        """,
}


def test_pilots_get_the_documented_environment(tmp_path, run_snakemake):
    """Started as if inside an allocation (SLURM_* set) and with variables of the login node:
    the pilot sees its own SLURM_JOB_ID, none of the inherited SLURM_* variables, none of the
    undeclared variables, and PATH, the Python environment and the envvars: ones."""
    wd = tmp_path / "wf"
    wd.mkdir()
    for name, text in ENV_WORKFLOW.items():
        (wd / name).write_text(textwrap.dedent(text).lstrip())
    env = {
        "SLURM_JOB_ID": "999999",
        "SLURM_MEM_PER_NODE": "1",
        "SLURM_CPUS_PER_TASK": "7",
        "LOGIN_NODE_SECRET": "do-not-export",
        "STICKY_TEST_NEEDED": "a,b=c",
        "LC_ALL": "C.UTF-8",
    }
    run = run_snakemake(wd, *SLURM, env=env, timeout=180)
    assert run.returncode == 0, run.output
    assert run.output.count("Snakemake runs inside Slurm job 999999") == 1, run.output
    seen = json.loads((wd / "env.json").read_text())
    pilot_job = seen["SLURM_JOB_ID"]
    assert pilot_job != "999999" and pilot_job.isdigit()
    assert "SLURM_MEM_PER_NODE" not in seen
    assert seen.get("SLURM_CPUS_PER_TASK") != "7"
    assert "LOGIN_NODE_SECRET" not in seen
    assert seen["STICKY_TEST_NEEDED"] == "a,b=c"  # declared with envvars:, comma and all
    assert seen["PATH"] == os.environ["PATH"]
    assert seen["LC_ALL"] == "C.UTF-8"
    for name in ("VIRTUAL_ENV", "PYTHONPATH", "HOME"):
        if name in os.environ:
            assert seen[name] == os.environ[name], name


# ---- accounting down mid-run --------------------------------------------------------------

DOWN_AT_MOST = 170.0
"""Seconds MariaDB may stay stopped (the cluster is shared: at most 3 minutes)."""


def mariadb_up() -> bool:
    return subprocess.run(["mysqladmin", "ping", "--silent"], capture_output=True).returncode == 0


def restart_accounting(timeout: float = 90.0) -> None:
    """Start MariaDB (and slurmdbd, if it ended) as tests/slurm/start-cluster.sh does, and wait
    until sacct answers again."""
    if not mariadb_up():
        # Detached through a shell (as the cluster script starts it): mysqld_safe outlives the
        # test, and a Popen left running is a ResourceWarning in whichever test collects it.
        subprocess.run(
            ["sh", "-c", "setsid mysqld_safe --user=mysql >/dev/null 2>&1 &"],
            check=True,
            timeout=30,
        )
    deadline = time.monotonic() + timeout
    while not mariadb_up():
        assert time.monotonic() < deadline, f"MariaDB did not answer within {timeout:g} s"
        time.sleep(0.5)
    if subprocess.run(["pgrep", "-x", "slurmdbd"], capture_output=True).returncode != 0:
        subprocess.run(["slurmdbd"], check=True)
    while slurm.accounting_error() is not None:
        assert time.monotonic() < deadline, (
            f"sacct did not answer within {timeout:g} s of restarting MariaDB: "
            f"{slurm.accounting_error()}"
        )
        time.sleep(1)


stops_mariadb = pytest.mark.skipif(
    not (
        os.environ.get("STICKY_REQUIRE_SLURM") == "1"
        or os.environ.get("STICKY_SLURM_FAULTS") == "1"
    ),
    reason="stops the cluster's MariaDB: set STICKY_SLURM_FAULTS=1 (CI sets STICKY_REQUIRE_SLURM)",
)


def can_stop_mariadb() -> None:
    if shutil.which("mysqladmin") is None or os.geteuid() != 0:
        pytest.skip("needs root and mysqladmin to stop the cluster's MariaDB")


@stops_mariadb
@pytest.mark.timeout(660)
def test_pilots_keep_running_while_accounting_is_down(workflow, start_snakemake, poll):
    """MariaDB stops while pilots run invocations: sacct fails, the run still completes with
    every output, pilot states come from squeue/scontrol, and the user is told once."""
    can_stop_mariadb()
    wd = workflow("sticky_basic")
    with_templates(wd, '{"slurm_partition": "cpu", "runtime": 10}')
    bg = start_snakemake(
        wd, *SLURM, "--config", "count=4", "sleep_on=[0,1,2,3]", "sleep_seconds=20", cores=2
    )
    try:
        try:
            poll(lambda: bg.events("worker_connected"), 300, "a pilot to connect")
            subprocess.run(["mysqladmin", "shutdown"], check=True, timeout=60)
            stopped_at = time.monotonic()
            poll(lambda: slurm.accounting_error() is not None, 60, "sacct to fail, MariaDB down")
            run = bg.finish(timeout=DOWN_AT_MOST - (time.monotonic() - stopped_at))
            down_for = time.monotonic() - stopped_at
        finally:
            restart_accounting()
    finally:
        if bg.proc.poll() is None:  # failed half-way: Ctrl-C, so that no pilot is left queued
            bg.proc.send_signal(signal.SIGINT)
            bg.proc.communicate(timeout=90)
    assert run.returncode == 0, run.output
    for i in range(4):
        assert run.read(f"out/{i}.txt") == f"{i} {i * 30}\n"
    assert run.read("summary.txt").count("\n") == 4
    assert run.output.count("Slurm accounting does not answer") == 1, run.output
    assert "pilots and Slurm jobs keep running and their states come from squeue/scontrol" in (
        run.output
    )
    assert run.events("worker_lost") == [] and run.events("requeued") == []
    assert down_for < DOWN_AT_MOST
    # After the restart: accounting is back, and learns of the run's pilots.
    run_id = sorted((wd / ".snakemake" / "sticky").iterdir())[-1].name

    def accounted() -> str:
        return subprocess.run(
            ["sacct", "-X", "-n", "-P", f"--name=sticky-{run_id}", "-o", "JobID"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout.strip()

    poll(accounted, 60, f"sacct to list the pilots of run {run_id} after MariaDB came back")


# The mixed workflow under the hybrid backend (as in test_slurm_hybrid.py): one pilot, and
# Slurm jobs of the slurm plugin for every rule that does not opt in.
HYBRID = [
    "--sticky-backend",
    "slurm",
    "--jobs",
    "4",
    "--sticky-max-pilots",
    "1",
    "--sticky-slurm-options",
    "init-seconds-before-status-checks=1",
    "--seconds-between-status-checks",
    "1",
    "--sticky-idle-timeout",
    "3",
    "--default-resources",
    "slurm_partition='cpu'",
    "runtime=10",
    "mem_mb=500",
]
HYBRID_JOBS = ["intermediate-0", "intermediate-1", "summary", "run_rule", "plain_script"]


def sacct_rows(job_ids: list[str], timeout: float = 90.0) -> dict[str, tuple[str, str]]:
    """job id -> (state, end time) from sacct once it has every job in a final state, with
    its end time."""
    deadline = time.monotonic() + timeout
    while True:
        out = subprocess.run(
            ["sacct", "-X", "-n", "-P", "-j", ",".join(job_ids), "-o", "JobID,State,End"],
            capture_output=True,
            text=True,
            timeout=30,
        ).stdout
        rows = {r[0]: (r[1], r[2]) for r in (line.split("|") for line in out.splitlines() if line)}
        # A job's end reaches the database a little after its state does ("Unknown" until).
        final = all(
            s.split()[0] not in ("PENDING", "RUNNING", "COMPLETING") and end != "Unknown"
            for s, end in rows.values()
        )
        if set(rows) >= set(job_ids) and final:
            return rows
        assert time.monotonic() < deadline, (
            f"sacct did not list Slurm jobs {', '.join(job_ids)} in a final state within "
            f"{timeout:g} s of MariaDB's restart; it has {rows}"
        )
        time.sleep(1)


@stops_mariadb
@pytest.mark.timeout(900)
def test_hybrid_slurm_jobs_complete_while_accounting_is_down(tmp_path, start_snakemake, poll):
    """The mixed workflow (sticky invocations on a pilot, shell:/run:/script: jobs as Slurm
    jobs of the slurm plugin) with MariaDB stopped once the pilot is connected: the Slurm jobs
    submitted and ended while sacct fails are decided from squeue/scontrol, the run succeeds
    with every output, and the user is told once (one warning for pilots and Slurm jobs)."""
    can_stop_mariadb()
    wd = tmp_path / "wf"
    shutil.copytree(WORKFLOWS / "sticky_hybrid", wd)
    snakefile = wd / "Snakefile"
    # The summary job lasts long enough for the accounting probe (every 20 s) to notice.
    before, summary = snakefile.read_text().split("rule summary:", 1)
    summary = summary.replace('"cat {input}', '"sleep 25; cat {input}', 1)
    snakefile.write_text(before + "rule summary:" + summary)
    bg = start_snakemake(wd, *HYBRID, cores=2)
    try:
        try:
            poll(lambda: bg.events("worker_connected"), 300, "the pilot to connect")
            subprocess.run(["mysqladmin", "shutdown"], check=True, timeout=60)
            stopped_at, stopped_wall = time.monotonic(), datetime.datetime.now()
            poll(lambda: slurm.accounting_error() is not None, 60, "sacct to fail, MariaDB down")
            run = bg.finish(timeout=DOWN_AT_MOST - (time.monotonic() - stopped_at))
            down_for = time.monotonic() - stopped_at
        finally:
            restart_accounting()
            restarted_wall = datetime.datetime.now()
    finally:
        if bg.proc.poll() is None:  # failed half-way: Ctrl-C, so that no job is left queued
            bg.proc.send_signal(signal.SIGINT)
            bg.proc.communicate(timeout=90)
    assert run.returncode == 0, run.output
    assert down_for < DOWN_AT_MOST
    gathered = run.read("gathered.txt")
    assert gathered == "0 0\n1 30\n0 0\n1 30\nrun\nplain plain_script\n", gathered
    assert [r["ok"] for r in run.events("invocation")] == [True, True]

    # One warning about accounting, for pilots and Slurm jobs together.
    assert run.output.count("Slurm accounting does not answer") == 1, run.output
    assert "this run's pilots and Slurm jobs keep running" in run.output, run.output
    for other in (
        "Unable to get the status of all active jobs",  # the slurm plugin's own warning
        "sacct gave no state",  # the hybrid jobs' own warning before they shared the watch
    ):
        assert other not in run.output, run.output
    assert "no state from sacct, squeue or scontrol" not in run.output  # nothing was lost

    # The jobs that do not opt in ran as Slurm jobs, and some of them ended while accounting
    # was down (their states came from squeue/scontrol, not sacct); sacct has them all after
    # the restart, COMPLETED.
    job_ids = {name: run.read(f"where/{name}.txt").strip() for name in HYBRID_JOBS}
    assert all(j.isdigit() for j in job_ids.values()), job_ids
    rows = sacct_rows(sorted(set(job_ids.values())))
    assert {state for state, _ in rows.values()} == {"COMPLETED"}, rows
    ended_while_down = [
        job
        for job, (_, end) in rows.items()
        if stopped_wall <= datetime.datetime.fromisoformat(end) <= restarted_wall
    ]
    assert ended_while_down, (rows, stopped_wall, restarted_wall)
