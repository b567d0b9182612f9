"""Real Snakemake runs through ``--executor sticky``: every kind of rule, warm state, parity."""

from pathlib import Path

import pytest

pytestmark = pytest.mark.integration


def read_tree(root: Path, folders: list[str]) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for folder in folders:
        for path in sorted((root / folder).rglob("*")):
            if path.is_file():
                files[str(path.relative_to(root))] = path.read_bytes()
    return files


def test_all_rule_kinds_run_and_state_is_built_once_per_worker(workflow, run_snakemake):
    """shell:, run:, plain script:, sticky script: with log/benchmark/params, temp() and
    threads all work; each worker builds the template once; all workers stop at the end."""
    wd = workflow("sticky_basic")
    run = run_snakemake(wd, "--config", "count=8")
    assert run.returncode == 0, run.output
    assert run.read("out/5.txt") == "5 150\n"
    assert run.read("shell.txt") == "shell\n"
    assert run.read("run.txt") == "run\n"
    assert run.read("plain_script.txt") == "plain plain_script\n"
    assert run.read("logs/invocation/3.log") == "invocation 3\n"
    assert not (wd / "tmp").exists() or not list((wd / "tmp").iterdir()), "temp() not removed"
    assert run.read("summary.txt").splitlines()[7] == "7 210"
    bench = run.read("benchmarks/invocation/2.tsv").splitlines()
    assert bench[0].split("\t")[0] == "s" and len(bench) == 2

    invocations = run.events("invocation")
    builds = run.events("state_built")
    assert len(invocations) == 8 and all(r["ok"] for r in invocations)
    workers = {r["worker"] for r in invocations}
    assert len(builds) == len(workers) <= 2
    assert len(list((wd / "builds").iterdir())) == len(workers)
    # Teardown ran in every worker: the code after the template's yield.
    assert len(list((wd / "teardowns").iterdir())) == len(workers)
    assert "sticky: 8 invocations (0 failed)" in run.output


def test_same_outputs_under_local_and_sticky(workflow, run_snakemake):
    """The same Snakefile, unchanged, gives byte-identical outputs under both executors;
    under local every job builds the state itself (the create-destroy baseline)."""
    local_wd, sticky_wd = workflow("sticky_basic", "local"), workflow("sticky_basic", "sticky")
    local = run_snakemake(local_wd, executor="local")
    sticky = run_snakemake(sticky_wd, executor="sticky")
    assert local.returncode == 0, local.output
    assert sticky.returncode == 0, sticky.output
    folders = ["out", "logs"]
    local_files = read_tree(local_wd, folders)
    assert local_files and local_files == read_tree(sticky_wd, folders)
    for name in ["summary.txt", "shell.txt", "run.txt", "plain_script.txt"]:
        assert (local_wd / name).read_bytes() == (sticky_wd / name).read_bytes()
    assert len(list((local_wd / "builds").iterdir())) == 6  # one build per job
    assert len(list((sticky_wd / "builds").iterdir())) <= 2  # one per worker


def test_second_run_has_nothing_to_do(workflow, run_snakemake):
    """Metadata is written for sticky jobs like for any job: a rerun finds nothing to do."""
    wd = workflow("sticky_basic")
    assert run_snakemake(wd).returncode == 0
    again = run_snakemake(wd)
    assert again.returncode == 0, again.output
    assert "Nothing to be done" in again.output


def test_dry_run_lists_sticky_jobs(workflow, run_snakemake):
    wd = workflow("sticky_basic")
    run = run_snakemake(wd, "--dry-run")
    assert run.returncode == 0, run.output
    assert "invocation" in run.output
    assert not (wd / ".snakemake" / "sticky").exists()


def test_two_templates_coexist(workflow, run_snakemake):
    """Rules naming different templates each get warm workers; routing keeps affinity."""
    wd = workflow("sticky_basic")
    snakefile = wd / "Snakefile"
    snakefile.write_text(
        snakefile.read_text()
        + '\n\nrule other_all:\n    input: expand("other/{i}.txt", i=range(4)), '
        'expand("out/{i}.txt", i=range(4))\n\n'
        'use rule invocation as other_invocation with:\n    output: "other/{i}.txt"\n'
        '    log: "logs/other/{i}.log"\n    benchmark: "benchmarks/other/{i}.tsv"\n'
        '    resources: sticky="other"\n'
    )
    run = run_snakemake(wd, "other_all", "--config", "count=4", cores=2)
    assert run.returncode == 0, run.output
    assert run.read("other/3.txt") == "3 900\n"
    assert run.read("out/3.txt") == "3 90\n"
    built = {(r["worker"], r["template"]) for r in run.events("state_built")}
    assert {t for _, t in built} == {"counter", "other"}
    for inv in run.events("invocation"):
        assert (inv["worker"], inv["template"]) in built
