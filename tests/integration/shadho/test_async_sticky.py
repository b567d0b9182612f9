"""``execution: async`` on the sticky runtime (issue 30, part 4): the search's trials are
invocations of sticky workers, one template per hardware class, local processes here and
Slurm pilots in test_async_slurm.py. A trial runs in a child forked from its class's warm
worker, so it sees the process as the objective's import left it, never what an earlier trial
did to it; a worker killed mid-trial costs the trial a rerun on a fresh worker, not the search;
an objective that ends its own process fails the search with one line naming the trial."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

import snakemake_shadho as shadho
from tests.conftest import PLUGINS_PATH

pytestmark = pytest.mark.integration

ENV = {**os.environ, "PYTHONPATH": PLUGINS_PATH, "OMP_NUM_THREADS": "1"}


def spec(hardware=None, rounds=2, per_round=4, **extra):
    return {
        "hpo": {
            "objective": "obj:evaluate",
            "execution": "async",
            "seed": 3,
            "rounds": rounds,
            "trials_per_round": per_round,
            "n_startup_jobs": 2,
            "space": {
                "model": {
                    "exclusive": {
                        "a": {"x": {"uniform": [0, 1]}},
                        "b": {"x": {"uniform": [0, 2]}},
                    }
                }
            },
            "hardware": hardware or {"fast": {"count": 1, "speed": 2}, "slow": {"count": 1}},
            **extra,
        }
    }


SEARCH = [sys.executable, "-m", "snakemake_shadho", "search", "spec.yaml", "--out", "out"]
SEARCH += ["--search-dir", "."]
"""The search, run in a folder holding spec.yaml and the objective."""


def run_search(folder: Path, timeout: float = 240, **env: str) -> tuple[int, str]:
    """Run the search in ``folder``; its exit status and its output (both streams)."""
    proc = subprocess.run(
        SEARCH,
        cwd=folder,
        env={**ENV, **env},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return proc.returncode, proc.stdout + proc.stderr


def search(
    folder: Path, objective: str, cfg: dict, timeout: float = 240, **env: str
) -> tuple[int, str]:
    (folder / "obj.py").write_text(objective)
    (folder / "spec.yaml").write_text(yaml.safe_dump(cfg))
    return run_search(folder, timeout, **env)


# Each trial bumps a counter in a module its objective imported, sets numpy's print options
# and a process-wide default, then reports what it found: a fresh process finds all three as
# the import left them.
LEAKY = """
import os
import socket

import numpy as np

import counter


def evaluate(params, threads=1):
    counter.calls += 1
    found = {
        "calls": counter.calls,
        "precision": np.get_printoptions()["precision"],
        "timeout": socket.getdefaulttimeout(),
        "hw_class": os.environ.get("SHADHO_HW_CLASS"),
        "pid": os.getpid(),
    }
    np.set_printoptions(precision=2)
    socket.setdefaulttimeout(5.0)
    return {"loss": (params["x"] - 0.3) ** 2, **found}
"""


# Rule hpo_search runs the driver as a Snakemake job, whose environment sizes thread pools to
# the job's threads (4 here): numpy's OpenBLAS would start its pool when the objective's import
# loads it, and a worker with threads cannot be forked (every trial would then run in direct
# mode and, changing the process, rebuild its worker). Workers are built single-threaded.
JOB_THREADS = {
    name: "4"
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                 "GOTO_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")
}  # fmt: skip


def test_each_trial_sees_its_workers_process_as_a_fresh_one(tmp_path):
    (tmp_path / "counter.py").write_text("calls = 0\n")
    code, out = search(tmp_path, LEAKY, spec(), **JOB_THREADS)
    assert code == 0, out
    assert "2 sticky workers starting as local processes (1 fast, 1 slow)" in out, out
    history = shadho.read_jsonl(tmp_path / "out/history.jsonl")
    assert len(history) == 8 and all(r["status"] == "ok" for r in history), out
    for r in history:
        extra = r["extra"]
        assert extra["calls"] == 1, r  # a kept process would count 2, 3, ...
        assert extra["precision"] == 8 and extra["timeout"] is None, r
        assert extra["hw_class"] == r["hw_class"], r
    # One warm worker per class served all of its trials (each in a child of its own).
    metrics = next((tmp_path / "out/sticky").glob("*/metrics.jsonl"))
    events = [json.loads(line) for line in metrics.read_text().splitlines()]
    assert sum(e["event"] == "state_built" for e in events) == 2
    assert not [e for e in events if e["event"] == "worker_retired"], "direct mode"
    assert sum(e["event"] == "invocation" for e in events) == 8
    assert len({r["extra"]["pid"] for r in history}) == 8
    assert not list((tmp_path / "out/sticky").glob("*/records/*")), "records are read, then gone"


# The first trial to run on a "slow" worker tells the test its worker (the forked trial's
# parent) and waits to be killed with it; every other trial is quick.
KILLED = """
import os
import time


def evaluate(params, threads=1):
    if os.environ["SHADHO_HW_CLASS"] == "slow" and not os.path.exists("marked"):
        with open("marked.tmp", "w") as f:
            f.write(str(os.getppid()))
        os.replace("marked.tmp", "marked")
        time.sleep(60)
    return (params["x"] - 0.3) ** 2
"""


def test_a_worker_killed_mid_trial_costs_a_rerun_not_the_search(tmp_path):
    (tmp_path / "obj.py").write_text(KILLED)
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(spec()))
    proc = subprocess.Popen(
        SEARCH,
        cwd=tmp_path,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not (tmp_path / "marked").exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()[0]
            time.sleep(0.1)
        os.kill(int((tmp_path / "marked").read_text()), signal.SIGKILL)
        out, _ = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, out
    assert "lost its slow worker; it runs again on a fresh one" in out, out
    history = shadho.read_jsonl(tmp_path / "out/history.jsonl")
    assert len(history) == 8 and all(r["status"] == "ok" for r in history), out
    assert len({r["trial"] for r in history}) == 8


EXITS = """
import os


def evaluate(params, threads=1):
    if params["model"] == "b":
        os._exit(3)
    return (params["x"] - 0.3) ** 2
"""


def test_an_objective_that_ends_its_process_fails_the_search_naming_the_trial(tmp_path):
    code, out = search(tmp_path, EXITS, spec(hardware={"cpu": {"count": 2}}))
    assert code == 2, out
    assert "does not declare" in out and "trial b." in out, out
    assert "the trial ended without a result" in out and "status 3" in out, out
    assert "Traceback" not in out.split("shadho: ", 1)[0], out
    history = shadho.read_jsonl(tmp_path / "out/history.jsonl")
    assert any(r["status"] == "fail" and r["subspace"] == "b" for r in history)


def test_classes_split_between_slurm_and_local_are_refused_in_one_line(tmp_path):
    hardware = {"gpu": {"count": 1, "slurm_partition": "gpu"}, "cpu": {"count": 1}}
    code, out = search(tmp_path, EXITS, spec(hardware=hardware))
    assert code == 2
    assert out.strip().splitlines() == [
        "shadho: execution: async runs every worker through one backend, but classes gpu "
        "name a slurm_partition and cpu do not: give every class a slurm_partition (Slurm "
        "pilots) or none (local processes)"
    ]
