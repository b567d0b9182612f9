"""Checkpoint-aware rule skipping (--sticky-checkpoints): restore at another site, rerun
exactly what a change touches, never restore a damaged object."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

OUTPUTS = ["out", "logs", "summary.txt", "shell.txt", "run.txt", "plain_script.txt"]


def restored_and_stored(output: str) -> tuple[int, int]:
    m = re.search(r"checkpoints: (\d+) job\(s\) restored, (\d+) stored", output)
    assert m, output
    return int(m.group(1)), int(m.group(2))


def same_outputs(a: Path, b: Path) -> bool:
    for name in OUTPUTS:
        left, right = a / name, b / name
        files = (
            sorted(p.relative_to(left) for p in left.rglob("*") if p.is_file())
            if left.is_dir()
            else [Path()]
        )
        for rel in files:
            if (left / rel).read_bytes() != (right / rel).read_bytes():
                return False
    return True


@pytest.fixture
def site_a(workflow, run_snakemake, tmp_path):
    """The test workflow (plus a local helper module its script imports), run once with a
    checkpoint store; returns (site A, store)."""
    wd = workflow("sticky_basic", "site-a")
    (wd / "scripts" / "helper.py").write_text("OFFSET = 0\n")
    script = wd / "scripts" / "invocation.py"
    script.write_text(
        "from helper import OFFSET\n"
        + script.read_text().replace('state["factor"]\n', 'state["factor"] + OFFSET\n')
    )
    store = tmp_path / "store"
    run = run_snakemake(wd, "--sticky-checkpoints", str(store))
    assert run.returncode == 0, run.output
    assert restored_and_stored(run.output) == (0, 16)
    return wd, store


def clone(site: Path, to: Path) -> Path:
    """A fresh copy of the workflow only: no outputs, no .snakemake, new paths and mtimes."""
    shutil.copytree(
        site,
        to,
        ignore=shutil.ignore_patterns(
            ".snakemake",
            "out",
            "logs",
            "benchmarks",
            "tmp",
            "builds",
            "teardowns",
            "markers",
            "*.txt",
            "__pycache__",
        ),
    )
    return to


def test_second_site_restores_everything_and_runs_nothing(site_a, run_snakemake, tmp_path):
    wd_a, store = site_a
    wd_b = clone(wd_a, tmp_path / "elsewhere" / "site-b")
    run = run_snakemake(wd_b, "--sticky-checkpoints", str(store))
    assert run.returncode == 0, run.output
    assert restored_and_stored(run.output) == (16, 0)
    # Restored before scheduling: Snakemake itself finds nothing to run, no job starts.
    assert "restored 16 job(s) before scheduling" in run.output
    assert "Nothing to be done" in run.output and "rule invocation:" not in run.output
    assert not (wd_b / "builds").exists()  # no template was built: no invocation ran
    assert not (wd_b / "tmp").exists() or not list((wd_b / "tmp").iterdir())  # temp() honoured
    assert not (wd_b / ".snakemake" / "sticky").exists() or not list(
        (wd_b / ".snakemake" / "sticky").glob("*/metrics.jsonl")
    )
    assert same_outputs(wd_a, wd_b)
    # Snakemake's metadata was written for the restored jobs: --summary and later runs agree.
    summary = run_snakemake(wd_b, "--summary")
    rows = [line.split("\t") for line in summary.output.splitlines() if "\t" in line]
    status = {row[0]: row for row in rows}
    assert status["out/3.txt"][2] == "invocation" and "ok" in status["out/3.txt"], summary.output
    odd = [
        row
        for name, row in status.items()
        if name != "output_file" and row[4] not in ("ok", "removed temp file")
    ]
    assert not odd and all(row[5] == "no update" for row in rows[1:]), rows
    again = run_snakemake(wd_b, "--sticky-checkpoints", str(store))
    assert "Nothing to be done" in again.output


CHANGES = {
    "script": (
        lambda wd: (wd / "scripts/invocation.py").write_text(
            (wd / "scripts/invocation.py").read_text() + "\n# edited\n"
        ),
        "script:scripts/invocation.py changed",
        6,
    ),
    "imported module": (
        lambda wd: (wd / "scripts/helper.py").write_text("OFFSET = 1\n"),
        "module:helper.py changed",
        6,
    ),
    "param": (
        lambda wd: (wd / "Snakefile").write_text(
            (wd / "Snakefile").read_text().replace("scale=3", "scale=4")
        ),
        "params:scale changed",
        6,
    ),
    "template": (
        lambda wd: (wd / "sticky_templates.py").write_text(
            (wd / "sticky_templates.py").read_text() + "\n# edited\n"
        ),
        "template changed",
        6,
    ),
    "shell code": (
        lambda wd: (wd / "Snakefile").write_text(
            (wd / "Snakefile").read_text().replace("echo shell >", "echo shell2 >")
        ),
        "code:shell changed",
        1,
    ),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_one_change_reruns_exactly_what_it_touches(site_a, run_snakemake, tmp_path, change):
    edit, reason, rerun_of_rule = CHANGES[change]
    wd_a, store = site_a
    wd_b = clone(wd_a, tmp_path / "site-b")
    edit(wd_b)
    run = run_snakemake(wd_b, "--sticky-checkpoints", str(store))
    assert run.returncode == 0, run.output
    assert run.output.count(reason) == rerun_of_rule, run.output
    restored, stored = restored_and_stored(run.output)
    assert restored + stored == 16 and stored >= rerun_of_rule
    if change == "param":  # new values downstream: their consumers rerun, by input content
        # ... except out/0.txt, whose value (0 times any scale) did not change: early cutoff.
        assert run.output.count("reruns: input:out/") == 5, run.output
        assert "reruns: input:out/0.txt" not in run.output


def test_new_wildcard_value_runs_only_the_new_job(site_a, run_snakemake, tmp_path):
    wd_a, store = site_a
    wd_b = clone(wd_a, tmp_path / "site-b")
    run = run_snakemake(wd_b, "out/2.txt", "out/9.txt", "--sticky-checkpoints", str(store))
    assert run.returncode == 0, run.output
    assert restored_and_stored(run.output) == (1, 1)  # out/2 restored; out/9 is new
    assert run.read("out/9.txt") == "9 270\n"


def test_config_change_reruns_only_jobs_that_may_read_it(site_a, run_snakemake, tmp_path):
    """The invocation script reads config with a computed key and run: code sees all of
    config: those jobs rerun. Shell rules and scripts that read no config are restored."""
    wd_a, store = site_a
    wd_b = clone(wd_a, tmp_path / "site-b")
    run = run_snakemake(wd_b, "--sticky-checkpoints", str(store), "--config", "unused_key=1")
    assert run.returncode == 0, run.output
    assert restored_and_stored(run.output) == (9, 7), run.output
    assert run.output.count("config changed") == 7, run.output


def test_damaged_object_is_detected_and_the_job_reruns(site_a, run_snakemake, tmp_path):
    wd_a, store = site_a
    target = next(
        p
        for p in (store / "objects").rglob("*")
        if p.is_file() and p.read_bytes() == (wd_a / "out" / "3.txt").read_bytes()
    )
    os.chmod(target, 0o644)
    target.write_text("tampered\n")
    wd_b = clone(wd_a, tmp_path / "site-b")
    run = run_snakemake(wd_b, "--sticky-checkpoints", str(store))
    assert run.returncode == 0, run.output
    assert "does not match its hash" in run.output and target.name in run.output
    assert (wd_b / "out" / "3.txt").read_bytes() == (wd_a / "out" / "3.txt").read_bytes()
    assert same_outputs(wd_a, wd_b)


def test_unusable_store_is_a_clear_error(workflow, run_snakemake, tmp_path):
    wd = workflow("sticky_basic")
    not_a_store = tmp_path / "data"
    not_a_store.mkdir()
    (not_a_store / "x.csv").write_text("1")
    run = run_snakemake(wd, "--sticky-checkpoints", str(not_a_store))
    assert run.returncode != 0
    assert "not empty (it holds 'x.csv') and not a checkpoint store" in run.output


def test_plan_says_what_would_be_restored_and_why_the_rest_runs(site_a, run_snakemake, tmp_path):
    wd_a, store = site_a
    wd_b = clone(wd_a, tmp_path / "site-b")
    (wd_b / "Snakefile").write_text(
        (wd_b / "Snakefile").read_text().replace("echo shell >", "echo shell2 >")
    )
    run = run_snakemake(
        wd_b, "--sticky-checkpoints", str(store), "--sticky-checkpoints-plan", "out/9.txt", "all"
    )
    assert run.returncode == 0, run.output
    rows = dict(re.findall(r"^  (\w+)\s+(\d+\s+\d+)$", run.output, re.M))
    assert rows["invocation"].split() == ["6", "1"], run.output
    assert rows["shell_rule"].split() == ["0", "1"], run.output
    assert rows["summary"].split() == ["1", "0"], run.output
    assert "shell_rule (shell.txt): code:shell changed" in run.output
    assert "invocation (out/9.txt): never stored" in run.output
    # Nothing was restored or run.
    assert not (wd_b / "out").exists() and not (wd_b / "shell.txt").exists()


def test_explain_names_what_changed_after_the_fact(site_a, run_snakemake, tmp_path):
    wd_a, store = site_a
    (wd_a / "Snakefile").write_text((wd_a / "Snakefile").read_text().replace("scale=3", "scale=5"))
    run = run_snakemake(wd_a, "--sticky-checkpoints", str(store))
    assert run.returncode == 0, run.output
    explained = subprocess.run(
        [sys.executable, "-m", "ckptstore", "explain", str(store), "out/2.txt", "shell.txt"],
        capture_output=True,
        text=True,
    )
    assert explained.returncode == 0, explained.stderr
    lines = explained.stdout.splitlines()
    assert any(
        line.startswith("rule invocation (out/2.txt): reran") and "params:scale changed" in line
        for line in lines
    ), explained.stdout
    assert any("rule shell_rule (shell.txt): stored once" in line for line in lines), lines


def test_two_runs_sharing_a_store_at_once_both_store_and_a_third_restores(
    workflow, start_snakemake, run_snakemake, tmp_path
):
    """Two workflows writing the same keys and objects at the same time leave a sound store."""
    store = tmp_path / "store"
    first = workflow("sticky_basic", "one")
    second = workflow("sticky_basic", "two")
    runs = [start_snakemake(wd, "--sticky-checkpoints", str(store)) for wd in (first, second)]
    for run in (r.finish() for r in runs):
        assert run.returncode == 0, run.output
        assert restored_and_stored(run.output)[0] + restored_and_stored(run.output)[1] == 16
    verify = subprocess.run(
        [sys.executable, "-m", "ckptstore", "verify", str(store)], capture_output=True, text=True
    )
    assert verify.returncode == 0 and "0 corrupt object(s)" in verify.stdout, verify.stdout
    third = clone(first, tmp_path / "three")
    run = run_snakemake(third, "--sticky-checkpoints", str(store))
    assert run.returncode == 0, run.output
    assert restored_and_stored(run.output) == (16, 0)
    assert same_outputs(first, third) and same_outputs(second, third)


def test_gc_after_a_nothing_to_be_done_run_keeps_what_the_outputs_rest_on(
    site_a, run_snakemake, tmp_path
):
    """Issue 26: a "Nothing to be done" rerun left no run record, so `gc --keep-runs 1`
    kept only the run before it (which stored one changed job) and deleted the keys the
    site's other current outputs rested on: a fresh site then reran them."""
    wd_a, store = site_a
    CHANGES["shell code"][0](wd_a)
    changed = run_snakemake(wd_a, "--sticky-checkpoints", str(store))
    assert restored_and_stored(changed.output) == (0, 1), changed.output
    again = run_snakemake(wd_a, "--sticky-checkpoints", str(store))
    assert "Nothing to be done" in again.output, again.output
    gc = subprocess.run(
        [sys.executable, "-m", "ckptstore", "gc", str(store), "--keep-runs", "1"],
        capture_output=True,
        text=True,
    )
    assert gc.returncode == 0, gc.stdout + gc.stderr
    wd_b = clone(wd_a, tmp_path / "elsewhere" / "site-b")
    run = run_snakemake(wd_b, "--sticky-checkpoints", str(store))
    assert run.returncode == 0, run.output
    assert restored_and_stored(run.output) == (16, 0), run.output
