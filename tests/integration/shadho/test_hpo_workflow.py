"""The generated SHADHO rule graph, run end to end with the real Snakemake on a tiny budget:
the hpo-digits workflow (rules/hpo.smk) with real scikit-learn SVMs on the digits data."""

import copy
import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import pytest
import yaml

import snakemake_shadho as shadho
from tests.conftest import PLUGINS_PATH, BackgroundRun, snakemake_command

pytestmark = pytest.mark.integration

REPO = Path(__file__).parents[3]
ENV = {"PYTHONPATH": PLUGINS_PATH, "OMP_NUM_THREADS": "1"}
HARDWARE = {
    "fast": {
        "count": 1,
        "cpus": 1,
        "speed": 2.0,
        "mem_mb": 1500,
        "slurm_partition": "gpu",
        "gres": "gpu:1",
    },
    "slow": {
        "count": 1,
        "cpus": 1,
        "speed": 1.0,
        "mem_mb": 1000,
        "slurm_partition": "cpu",
        "constraint": "old",
    },
}


def tiny_config(rounds=2, trials=4, **extra):
    """A tiny search: three SVM sub-spaces on 300 digits, 2-fold CV; one sub-space uses a
    kernel scikit-learn does not have, so every trial of it fails (an error the objective does
    not declare: ``max_failed_trials`` lets the search go on)."""
    C = {"loguniform": [0.1, 100]}
    return {
        "hpo": {
            "objective": "snakemake_shadho.digits:evaluate",
            "objective_args": {"folds": 2, "n_samples": 300},
            "sticky_template": "digits",
            "seed": 5,
            "rounds": rounds,
            "trials_per_round": trials,
            "rerank_every": 4,
            "n_startup_jobs": 2,
            "space": {
                "model": {
                    "exclusive": {
                        "svm_linear": {"kernel": "linear", "C": C},
                        "svm_rbf": {"kernel": "rbf", "C": C, "gamma": {"loguniform": [1e-3, 1]}},
                        "svm_broken": {"kernel": "no_such_kernel", "C": C},
                    }
                }
            },
            "hardware": copy.deepcopy(HARDWARE),
            "max_failed_trials": 100,
            **extra,
        }
    }


@pytest.fixture
def hpo_workflow(tmp_path):
    """A copy of workflows/hpo-digits (it includes the packaged hpo.smk: it runs anywhere)."""

    def make(config):
        target = tmp_path / "hpo-digits"
        shutil.copytree(
            REPO / "workflows" / "hpo-digits",
            target,
            ignore=shutil.ignore_patterns("results", ".snakemake"),
        )
        (target / "config" / "config.yaml").write_text(yaml.safe_dump(config))
        return target

    return make


def run(workdir, *args, executor="local", timeout=240):
    cmd = snakemake_command(
        "--scheduler",
        "greedy",
        "--resources",
        "hw_fast=1",
        "hw_slow=1",
        *args,
        executor=executor,
        cores=2,
    )
    proc = subprocess.run(
        cmd,
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **ENV},
    )
    return proc.returncode, proc.stdout + proc.stderr


def trial_files(workdir):
    return sorted((workdir / "results/hpo/rounds").glob("*/trials/*/*.json"))


def final_history(workdir, rounds):
    return shadho.read_jsonl(workdir / f"results/hpo/rounds/{rounds - 1}/history.jsonl")


def test_local_end_to_end_with_class_resources_and_failed_trials(hpo_workflow):
    """2 rounds x 4 trials under --executor local: every planned trial recorded once, each job
    carried its class's resources (partition, gres, constraint, memory), failing trials are
    recorded with their error and the search finishes with a report."""
    workdir = hpo_workflow(tiny_config())
    code, out = run(workdir)
    assert code == 0, out
    history = final_history(workdir, 2)
    assert len(history) == 8 and len({r["trial"] for r in history}) == 8
    for record in history:
        cls = shadho.parse_hardware(HARDWARE)[record["hw_class"]]
        resources = record["job"]["resources"]
        for key, value in cls.resources().items():
            assert resources[key] == value, (record["trial"], key)
        other = "slow" if record["hw_class"] == "fast" else "fast"
        assert resources[f"hw_{other}"] == 0
        assert record["job"]["threads"] == cls.cpus
    broken = [r for r in history if r["subspace"] == "svm_broken"]
    assert broken and all(r["status"] == "fail" and "no_such_kernel" in r["error"] for r in broken)
    ok = [r for r in history if r["status"] == "ok"]
    assert ok and all(0 <= r["loss"] < 1 for r in ok)
    report = workdir / "results/hpo/report"
    best = shadho.read_json(report / "best.json")["best"]
    assert best["loss"] == min(r["loss"] for r in ok)
    assert "## Hardware classes" in (report / "report.md").read_text()
    assert (report / "convergence.png").stat().st_size > 1000
    assert "svm_broken" in (report / "subspaces.csv").read_text()
    # A second run finds nothing to do; raising the budget extends the search without
    # redoing the recorded rounds.
    before = {p: p.read_bytes() for p in trial_files(workdir)}
    config = tiny_config(rounds=3)
    (workdir / "config/config.yaml").write_text(yaml.safe_dump(config))
    code, out = run(workdir)
    assert code == 0, out
    assert all(p.read_bytes() == b for p, b in before.items())
    assert len(final_history(workdir, 3)) == 12


def test_sticky_executor_runs_trials_as_invocations(hpo_workflow):
    """Under --executor sticky each trial is an invocation on a worker holding the data."""
    workdir = hpo_workflow(tiny_config(rounds=1, trials=4))
    code, out = run(workdir, executor="sticky")
    assert code == 0, out
    assert len(final_history(workdir, 1)) == 4
    logs = sorted((workdir / ".snakemake/sticky").glob("*/metrics.jsonl"))
    events = [json.loads(line) for line in logs[-1].read_text().splitlines()]
    invocations = [e for e in events if e["event"] == "invocation"]
    assert len(invocations) == 4
    builds = [e for e in events if e["event"] == "state_built"]
    assert builds and all(e["template"] == "digits" for e in builds)
    assert len(builds) < len(invocations)


def test_resume_after_interrupt_repeats_and_loses_nothing(hpo_workflow, poll):
    """Interrupt the search once round 1 has started; the rerun keeps every recorded trial
    (byte for byte), runs each planned trial exactly once, and finishes."""
    workdir = hpo_workflow(tiny_config(rounds=3, trials=3))
    cmd = snakemake_command(
        "--scheduler", "greedy", "--resources", "hw_fast=1", "hw_slow=1", executor="local", cores=2
    )
    proc = subprocess.Popen(
        cmd,
        cwd=workdir,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, **ENV},
    )
    background = BackgroundRun.__new__(BackgroundRun)
    background.workdir, background.proc = workdir, proc
    try:
        poll(
            lambda: list((workdir / "results/hpo/rounds/1/trials").glob("*/*.json")),
            timeout=150,
            what="a round-1 trial record",
        )
        proc.send_signal(signal.SIGINT)
        background.finish(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert not (workdir / "results/hpo/rounds/2/history.jsonl").exists()
    before = {p: p.read_bytes() for p in trial_files(workdir)}
    assert before
    code, out = run(workdir, "--rerun-incomplete")
    assert code == 0, out
    history = final_history(workdir, 3)
    assert len(history) == 9 and len({r["trial"] for r in history}) == 9
    for path, content in before.items():
        assert path.read_bytes() == content
    recorded = {r["trial"]: r for r in history}
    for path, content in before.items():
        assert recorded[path.stem]["started"] == json.loads(content)["started"]
    plans = [shadho.read_json(workdir / f"results/hpo/rounds/{r}/plan.json") for r in range(3)]
    assert sorted(t["trial"] for p in plans for t in p["trials"]) == sorted(recorded)


@pytest.mark.parametrize(
    ("change", "key"),
    [
        (
            lambda c: c["hpo"]["space"]["model"]["exclusive"].update(empty={"k": {"choice": []}}),
            "hpo.space.model.empty.k.choice",
        ),
        (lambda c: c["hpo"]["hardware"]["fast"].update(speed=-1), "hpo.hardware.fast.speed"),
        (
            lambda c: c["hpo"]["space"]["model"]["exclusive"]["svm_rbf"].update(_classes=["tpu"]),
            "hpo.space.svm_rbf._classes",
        ),
    ],
)
def test_invalid_spec_is_rejected_before_any_job(hpo_workflow, change, key):
    config = tiny_config()
    change(config)
    workdir = hpo_workflow(config)
    code, out = run(workdir, "--dry-run")
    assert code != 0
    assert key in out and "Traceback" not in out
    assert not (workdir / "results/hpo/rounds").exists()
