"""Real Snakemake runs with the checkpoint store as storage (``ckpt``).

Every output goes to the store (``--default-storage-provider ckpt``), so a second run in
another directory, with no outputs and no ``.snakemake/``, finds them there and runs nothing;
a tampered object fails its retrieve clearly and the next run produces it again.
"""

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import ckptstore
from ckptstore import CheckpointStore

pytestmark = pytest.mark.integration

SNAKEFILE = textwrap.dedent(
    """
    rule all:
        input: "results/b.txt"

    rule a:
        output: "results/a.txt"
        shell: "echo hello > {output}"

    rule split:
        output: directory("results/parts")
        shell: "mkdir -p {output}/sub; echo one > {output}/p1.txt; echo two > {output}/sub/p2.txt"

    rule b:
        input: a="results/a.txt", p="results/parts"
        output: "results/b.txt"
        shell: "(tr a-z A-Z < {input.a}; cat {input.p}/p1.txt {input.p}/sub/p2.txt) > {output}"
    """
)


def snakemake(workdir: Path, store: "Path | None", *args: str) -> str:
    """Run ``python -m snakemake`` in ``workdir``; return its exit status and output."""
    plugins = str(Path(ckptstore.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([plugins, os.environ.get("PYTHONPATH", "")])}
    cmd = [sys.executable, "-m", "snakemake", "-j", "1", "--nocolor", *args]
    if store is not None:  # every output into the store at ``store``
        cmd += ["--default-storage-provider", "ckpt", "--default-storage-prefix", "ckpt://"]
        cmd += ["--storage-ckpt-root", str(store)]
    proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=240)
    return f"exit {proc.returncode}\n{proc.stdout}{proc.stderr}"


def site(tmp_path: Path, name: str, snakefile: str = SNAKEFILE) -> Path:
    wd = tmp_path / name
    wd.mkdir()
    (wd / "Snakefile").write_text(snakefile)
    return wd


def jobs_run(output: str) -> list[str]:
    return sorted(
        line.split("(Rule: ")[1].rstrip(")")
        for line in output.splitlines()
        if line.startswith("Finished jobid:")
    )


@pytest.fixture(scope="module")
def first_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """One run at site A that fills a store (each test works on its own copy of it)."""
    tmp_path = tmp_path_factory.mktemp("first-run")
    store = tmp_path / "store"
    return store, snakemake(site(tmp_path, "site-a"), store)


@pytest.fixture
def store(first_run: tuple[Path, str], tmp_path: Path) -> Path:
    copy = tmp_path / "store"
    shutil.copytree(first_run[0], copy)
    return copy


def test_a_second_directory_finds_every_output_in_the_store_and_runs_nothing(
    first_run, store, tmp_path
):
    first = first_run[1]
    assert first.startswith("exit 0"), first
    assert jobs_run(first) == ["a", "all", "b", "split"]
    names = {r.name: r for r in CheckpointStore(store, create=False).names()}
    assert set(names) == {"results/a.txt", "results/parts", "results/b.txt"}
    assert names["results/parts"].is_tree

    site_b = site(tmp_path, "site-b")
    second = snakemake(site_b, store)
    assert second.startswith("exit 0"), second
    assert "Nothing to be done" in second and jobs_run(second) == []

    # Forcing b there retrieves its inputs (a file and a directory) from the store, verified.
    third = snakemake(site_b, store, "--forcerun", "b", "--keep-storage-local-copies")
    assert third.startswith("exit 0"), third
    assert jobs_run(third) == ["all", "b"]
    local = site_b / ".snakemake" / "storage" / "ckpt" / "results"
    assert (local / "b.txt").read_text() == "HELLO\none\ntwo\n"


def test_a_tampered_object_fails_the_retrieve_clearly_and_the_next_run_remakes_it(store, tmp_path):
    ckpt = CheckpointStore(store, create=False)
    digest = ckpt.resolve_name("results/a.txt").entry["file"]
    obj = ckpt.object_path(digest)
    os.chmod(obj, 0o644)
    obj.write_text("jello\n")

    site_b = site(tmp_path, "site-b")
    failed = snakemake(site_b, store, "--forcerun", "b")
    assert not failed.startswith("exit 0"), failed
    assert "ckpt://results/a.txt" in failed and digest in failed and "corrupt" in failed
    assert not (site_b / ".snakemake" / "storage" / "ckpt" / "results" / "a.txt").exists()
    assert list((store / "corrupt").iterdir())

    # The bad object was set aside, so results/a.txt now counts as missing: a reruns.
    again = snakemake(site_b, store, "--forcerun", "b")
    assert again.startswith("exit 0"), again
    assert jobs_run(again) == ["a", "all", "b"]
    assert ckpt.resolve_name("results/a.txt").entry["file"] == digest  # the same content again
    assert ckpt.has(digest)


def test_a_tagged_store_explicit_queries_and_glob_wildcards(tmp_path):
    """``storage NAME: provider="ckpt", root=...`` in the Snakefile; no command-line flags."""
    store = tmp_path / "store"
    seed = CheckpointStore(store)
    for sample in ["x", "y"]:
        (tmp_path / f"{sample}.txt").write_text(sample * 3)
        seed.bind_name(f"samples/{sample}.txt", tmp_path / f"{sample}.txt")
    snakefile = textwrap.dedent(
        f"""
        storage shared:
            provider="ckpt",
            root="{store}",

        SAMPLES = glob_wildcards(storage.shared("ckpt://samples/{{s}}.txt")).s

        rule all:
            input: storage.shared(expand("ckpt://upper/{{s}}.txt", s=SAMPLES))

        rule upper:
            input: storage.shared("ckpt://samples/{{s}}.txt")
            output: storage.shared("ckpt://upper/{{s}}.txt")
            shell: "tr a-z A-Z < {{input}} > {{output}}"
        """
    )
    out = snakemake(site(tmp_path, "wf", snakefile), None)
    assert out.startswith("exit 0"), out
    assert jobs_run(out) == ["all", "upper", "upper"]
    for sample in ["x", "y"]:
        record = seed.resolve_name(f"upper/{sample}.txt")
        target = tmp_path / f"got-{sample}"
        seed.copy_out(record.entry["file"], target)
        assert target.read_text() == sample.upper() * 3


def test_malformed_name_records_cost_a_rerun_not_the_run(store, tmp_path):
    """The Why case: one bad record (a digest ``md5:abc``, a tree entry climbing out of the
    local prefix) failed every rerun with an ExceptionGroup. Now each is set aside with one
    warning, counts as missing, and its job runs again."""
    import json

    ckpt = CheckpointStore(store, create=False)
    a, parts = ckpt._name_path("results/a.txt"), ckpt._name_path("results/parts")
    record = json.loads(a.read_text())
    record["entry"] = {"file": "md5:abc"}
    a.write_text(json.dumps(record))
    record = json.loads(parts.read_text())
    tree = record["entry"]["tree"]
    tree["../../../../../X"] = next(iter(tree.values()))
    parts.write_text(json.dumps(record))

    site_b = site(tmp_path, "site-b")
    # b needs both: each bad record counts as missing, so its job runs again.
    out = snakemake(site_b, store, "--forcerun", "b")
    assert out.startswith("exit 0"), out
    assert "ExceptionGroup" not in out and "Traceback" not in out
    assert out.count("is malformed") == 2, out
    assert jobs_run(out) == ["a", "all", "b", "split"]
    assert not list(tmp_path.rglob("X"))
    assert ckpt.resolve_name("results/a.txt") is not None  # bound anew, well-formed
