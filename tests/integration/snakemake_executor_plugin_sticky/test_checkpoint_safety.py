"""Checkpoints that are never stale and a store that is safe to share (issue 13, parts 1, 2,
4, 5), with real Snakemake runs of tests/integration/workflows/ckpt_keys: after every change,
a restored site holds what a fresh run would write; a hostile or damaged store costs reruns,
never a wrong file, a file outside the workflow or an aborted run."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration


def counts(output: str) -> tuple[int, int]:
    m = re.search(r"checkpoints: (\d+) job\(s\) restored, (\d+) stored", output)
    assert m, output
    return int(m.group(1)), int(m.group(2))


@pytest.fixture
def site(workflow, tmp_path):
    """The workflow, its out-of-tree data (two sample.csv of one base name) and a store."""
    data = tmp_path / "data"
    for run in ("run1", "run2"):
        (data / run).mkdir(parents=True)
        (data / run / "sample.csv").write_text(f"{run},1\n")
    wd = workflow("ckpt_keys", "site-a")
    (wd / "config.yaml").write_text(f"data: {json.dumps(str(data))}\n")
    return wd, data, tmp_path / "store"


def clone(wd: Path, to: Path) -> Path:
    keep = {"Snakefile", "config.yaml", "sticky_templates.py", "modelhelper.py", "scripts"}
    shutil.copytree(
        wd, to, ignore=lambda d, names: [n for n in names if d == str(wd) and n not in keep]
    )
    return to


def run_with(run_snakemake, wd, data, store, *args):
    return run_snakemake(wd, "--sticky-checkpoints", str(store), *args)


def gc(store: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ckptstore", "gc", str(store), *args],
        capture_output=True,
        text=True,
    )


def test_keys_cover_what_jobs_depend_on_and_gc_keeps_them(site, run_snakemake, tmp_path):
    wd_a, data, store = site
    first = run_with(run_snakemake, wd_a, data, store)
    assert first.returncode == 0, first.output
    # The opaque param has no stable form: one warning, its job is never stored.
    warned = re.findall(r"rule opaque is not cached: params:opt of rule opaque .*", first.output)
    assert len(warned) == 1, first.output
    assert counts(first.output) == (0, 3)
    # A rerun with nothing to do, and a plan, record no run: gc --keep-runs 1 keeps the first.
    again = run_with(run_snakemake, wd_a, data, store)
    assert "Nothing to be done" in again.output, again.output
    plan = run_with(run_snakemake, wd_a, data, store, "--sticky-checkpoints-plan", "-F")
    assert plan.returncode == 0, plan.output
    collected = gc(store, "--keep-runs", "1")
    assert collected.returncode == 0 and "deleted 0 key(s) and 0 object(s)" in collected.stdout

    # Site B: another config value (read by no job but the opaque param), and one of the two
    # out-of-tree inputs named sample.csv changed.
    (data / "run1" / "sample.csv").write_text("run1,2\n")
    wd_b = clone(wd_a, tmp_path / "site-b")
    run = run_with(run_snakemake, wd_b, data, store, "--config", "level=2")
    assert run.returncode == 0, run.output
    assert counts(run.output) == (2, 1), run.output  # model and tree restored; both reruns
    assert f"input:<outside>{data}/run1/sample.csv changed" in run.output, run.output
    assert (wd_b / "both.txt").read_text() == "run1,2\nrun2,1\n"
    assert (wd_b / "opaque.txt").read_text() == "2\n"
    assert (wd_b / "model.txt").read_text() == "1\n"

    # Site C: the template's helper module changed: the sticky job reruns, says why.
    wd_c = clone(wd_a, tmp_path / "site-c")
    (wd_c / "modelhelper.py").write_text("VALUE = 7\n")
    run = run_with(run_snakemake, wd_c, data, store)
    assert run.returncode == 0, run.output
    assert "rule model (model.txt) reruns: template-module:modelhelper.py changed" in run.output
    assert (wd_c / "model.txt").read_text() == "7\n"


def manifests_by_rule(store: Path) -> dict[str, Path]:
    return {
        json.loads(path.read_text())["meta"]["rule"]: path for path in store.glob("keys/*/*.json")
    }


def test_a_hostile_or_damaged_store_costs_reruns_never_wrong_files(site, run_snakemake, tmp_path):
    wd_a, data, store = site
    first = run_with(run_snakemake, wd_a, data, store)
    assert first.returncode == 0, first.output
    paths = manifests_by_rule(store)
    originals = {rule: path.read_text() for rule, path in paths.items()}

    def damage() -> None:
        model = json.loads(originals["model"])
        # Plant the workflow's own Snakefile: a safe name, but not one the job declares.
        model["outputs"]["Snakefile"] = model["outputs"]["model.txt"]
        paths["model"].write_text(json.dumps(model))
        paths["both"].write_text("{}")  # a manifest {}
        tree = json.loads(originals["tree"])
        entry = next(iter(tree["outputs"]["tree_out"]["tree"].values()))
        tree["outputs"]["tree_out"]["tree"]["../../../../X"] = entry  # climb out of a tree
        paths["tree"].write_text(json.dumps(tree))

    wd_b = clone(wd_a, tmp_path / "deep" / "site-b")
    damage()
    plan = run_with(run_snakemake, wd_b, data, store, "--sticky-checkpoints-plan")
    assert plan.returncode == 0, plan.output
    refused = "which is not an output, log or benchmark of the job"
    assert re.search(rf"model \(model\.txt\): checkpoint \w+ is refused: .*{refused}", plan.output)
    assert plan.output.count("is malformed") == 2, plan.output

    damage()
    collected = gc(store, "--keep-runs", "1")
    assert collected.returncode == 0, collected.stderr
    assert collected.stderr.count("warning:") == 2 and "Traceback" not in collected.stderr

    damage()
    run = run_with(run_snakemake, wd_b, data, store)
    assert run.returncode == 0, run.output
    assert counts(run.output) == (0, 3), run.output  # each refused or set aside: all ran
    assert "Traceback" not in run.output
    assert f"is refused: it names 'Snakefile', {refused}" in run.output, run.output
    assert not list(tmp_path.rglob("X"))
    assert (wd_b / "Snakefile").read_text() == (wd_a / "Snakefile").read_text()
    for name in ("model.txt", "both.txt", "tree_out/sub/t.txt"):
        assert (wd_b / name).read_bytes() == (wd_a / name).read_bytes()


def test_a_store_path_that_is_a_file_is_one_clear_error(site, run_snakemake, tmp_path):
    wd, data, _ = site
    not_a_store = tmp_path / "store.txt"
    not_a_store.write_text("x")
    run = run_with(run_snakemake, wd, data, not_a_store)
    assert run.returncode != 0
    assert "is a file, not a checkpoint store directory" in run.output
    assert "Traceback" not in run.output and not (wd / "both.txt").exists()


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs unshare for a read-only mount")
def test_a_read_only_store_restores_and_skips_storing(site, run_snakemake, tmp_path):
    """The store is bind-mounted read-only (a private mount namespace), as on an HPC site
    that mounts a shared store read-only."""
    wd_a, data, store = site
    first = run_with(run_snakemake, wd_a, data, store)
    assert first.returncode == 0, first.output
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("this machine does not allow mount namespaces")
    before = sorted(str(p) for p in store.rglob("*"))
    wd_b = clone(wd_a, tmp_path / "site-b")
    (wd_b / "Snakefile").write_text(
        (wd_b / "Snakefile").read_text().replace("cat {input}", "cat -- {input}")
    )
    command = " ".join(
        [
            f"mount --bind -o ro {store} {store} &&",
            f"exec {sys.executable} -m snakemake --executor sticky --cores 2 --nocolor",
            f"--sticky-checkpoints {store}",
        ]
    )
    proc = subprocess.run(
        ["unshare", "-m", "sh", "-c", command], cwd=wd_b, capture_output=True, text=True
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert output.count("is read-only: restoring from it, storing nothing") == 1, output
    assert counts(output) == (2, 0), output
    assert (wd_b / "both.txt").read_text() == "run1,1\nrun2,1\n"
    assert sorted(str(p) for p in store.rglob("*")) == before


def test_signed_manifests_restore_and_unsigned_ones_are_refused(site, run_snakemake, tmp_path):
    wd_a, data, store = site
    key = tmp_path / "ckpt.key"
    key.write_text("0123456789abcdef" * 4)
    key.chmod(0o600)
    signed = ("--sticky-checkpoints-key", str(key))
    first = run_with(run_snakemake, wd_a, data, store, *signed)
    assert first.returncode == 0 and counts(first.output) == (0, 3), first.output
    both = manifests_by_rule(store)["both"]
    body = json.loads(both.read_text())
    del body["sig"]  # as an untrusted writer without the key would leave it
    both.write_text(json.dumps(body))
    wd_b = clone(wd_a, tmp_path / "site-b")
    run = run_with(run_snakemake, wd_b, data, store, *signed)
    assert run.returncode == 0, run.output
    assert counts(run.output) == (2, 1), run.output
    assert "is refused: it is not signed" in run.output, run.output
    assert (wd_b / "both.txt").read_text() == "run1,1\nrun2,1\n"
    key.chmod(0o644)
    bad = run_with(run_snakemake, wd_b, data, store, *signed)
    assert bad.returncode != 0 and "chmod 600" in bad.output and "Traceback" not in bad.output
