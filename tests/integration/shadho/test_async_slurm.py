"""``execution: async`` with Slurm pilots (issue 30, part 4), on the real single-node cluster
that .ci/run starts (tests/slurm/start-cluster.sh): every class names a partition, so each of
its workers is a sticky pilot job submitted with the class's resources; every trial runs in one
of its class's pilots; a pilot cancelled mid-trial costs that trial a rerun on a fresh pilot;
no job is left when the search ends."""

import os
import subprocess
import time

import pytest
import yaml

import snakemake_shadho as shadho
from tests.integration.shadho.test_async_sticky import ENV, SEARCH, run_search, spec

pytestmark = [pytest.mark.integration, pytest.mark.slurm]

HARDWARE = {
    "gpu": {"count": 1, "cpus": 1, "mem_mb": 1000, "runtime": 10, "slurm_partition": "gpu"},
    "cpu": {"count": 1, "cpus": 1, "mem_mb": 1000, "runtime": 10, "slurm_partition": "cpu"},
}

# The first "cpu" trial tells the test its pilot and waits to be cancelled with it.
OBJECTIVE = """
import os
import time


def evaluate(params, threads=1):
    if os.environ["SHADHO_HW_CLASS"] == "cpu" and os.path.exists("cancel-me") and not (
        os.path.exists("marked")
    ):
        with open("marked.tmp", "w") as f:
            f.write(os.environ["SLURM_JOB_ID"])
        os.replace("marked.tmp", "marked")
        time.sleep(120)
    return {"loss": (params["x"] - 0.3) ** 2, "partition": os.environ.get("SLURM_JOB_PARTITION")}
"""


def jobs_named(prefix: str, settle_s: float = 15.0) -> list[str]:
    """The jobs squeue lists under ``prefix``, once none is left or ``settle_s`` passed (a
    cancelled job may be listed COMPLETING for a moment)."""
    deadline = time.monotonic() + settle_s
    while True:
        out = subprocess.run(
            ["squeue", "-h", "-o", "%j %i %T"], capture_output=True, text=True, timeout=30
        ).stdout
        jobs = [line for line in out.splitlines() if line.startswith(prefix)]
        if not jobs or time.monotonic() > deadline:
            return jobs
        time.sleep(0.5)


def start(folder, cancel: bool) -> "subprocess.Popen[str]":
    (folder / "obj.py").write_text(OBJECTIVE)
    (folder / "spec.yaml").write_text(yaml.safe_dump(spec(hardware=HARDWARE)))
    if cancel:
        (folder / "cancel-me").write_text("")
    return subprocess.Popen(
        SEARCH,
        cwd=folder,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def finish(proc: "subprocess.Popen[str]", timeout: float = 300) -> str:
    try:
        out, _ = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
    return out


def test_trials_run_in_their_classes_pilots_and_no_job_is_left(tmp_path):
    out = finish(start(tmp_path, cancel=False))
    assert "2 sticky workers starting as Slurm pilots (1 cpu, 1 gpu)" in out, out
    history = shadho.read_jsonl(tmp_path / "out/history.jsonl")
    assert len(history) == 8 and all(r["status"] == "ok" for r in history), out
    jobs = {}
    for r in history:
        assert r["extra"]["partition"] == r["hw_class"], r  # the class's own partition
        jobs.setdefault(r["hw_class"], set()).add(r["slurm_job"])
    assert set(jobs) == {"gpu", "cpu"}
    assert all(len(j) == 1 for j in jobs.values()), jobs  # one warm pilot per class
    assert jobs["gpu"] != jobs["cpu"]
    assert jobs_named("sticky-shadho-") == []


def test_a_pilot_cancelled_mid_trial_costs_a_rerun_on_a_fresh_pilot(tmp_path):
    proc = start(tmp_path, cancel=True)
    try:
        deadline = time.monotonic() + 180
        while not (tmp_path / "marked").exists():
            assert proc.poll() is None and time.monotonic() < deadline, finish(proc, 10)
            time.sleep(0.2)
        cancelled = (tmp_path / "marked").read_text()
        subprocess.run(["scancel", cancelled], check=True, timeout=30)
    finally:
        out = finish(proc)
    assert proc.returncode == 0, out
    assert "lost its cpu worker; it runs again on a fresh one" in out, out
    history = shadho.read_jsonl(tmp_path / "out/history.jsonl")
    assert len(history) == 8 and all(r["status"] == "ok" for r in history), out
    cpu_jobs = {r["slurm_job"] for r in history if r["hw_class"] == "cpu"}
    assert cancelled not in cpu_jobs and cpu_jobs, (cancelled, cpu_jobs)
    assert jobs_named("sticky-shadho-") == []
    assert os.path.exists(tmp_path / "marked")


def test_a_class_slurm_would_refuse_stops_the_search_before_any_job(tmp_path):
    """The sticky executor's pre-submit check, naming the spec key to fix."""
    hardware = {**HARDWARE, "gpu": {**HARDWARE["gpu"], "slurm_partition": "gpus"}}
    (tmp_path / "obj.py").write_text(OBJECTIVE)
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec(hardware=hardware)))
    code, out = run_search(tmp_path, timeout=120)
    assert code == 2, out
    assert "nothing was submitted" in out
    assert "invalid partition" in out and "hpo.hardware.gpu.slurm_partition" in out
    assert "Traceback" not in out
    assert not (tmp_path / "out/history.jsonl").exists()
