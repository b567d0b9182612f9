"""Snakemake's own test workflows through the checkpoint store (issue 26): a fresh site with
the store ends exactly like a fresh site without it (see the workflows' README).

Before issue 26, `test_priority` restored every job at site B and its `order.out` (appended
by the jobs, declared by none) never existed; `test_delete_output` counted as restored a job
Snakemake then re-executed."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import snakemake_command

pytestmark = pytest.mark.integration

UPSTREAM = Path(__file__).parents[1] / "workflows" / "snakemake_upstream_checkpoints"
NAMES = sorted(p.name for p in UPSTREAM.iterdir() if (p / "Snakefile").is_file())


def listing(site: Path) -> dict[str, object]:
    found: dict[str, object] = {}
    for root, dirs, files in os.walk(site):
        dirs[:] = [d for d in dirs if d != ".snakemake"]
        for name in dirs + files:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, site)
            if os.path.islink(path):
                found[rel] = ("link", os.readlink(path))
            elif os.path.isdir(path):
                found[rel] = ("dir", os.stat(path).st_mode & 0o7777)
            elif "benchmark" in rel:
                found[rel] = ("benchmark: timings differ",)
            else:
                found[rel] = (Path(path).read_bytes(), os.stat(path).st_mode & 0o7777)
    return found


def run(site: Path, store: "Path | None") -> subprocess.CompletedProcess:
    args = ["--sticky-checkpoints", str(store)] if store else []
    return subprocess.run(
        snakemake_command(*args, cores=1),
        cwd=site,
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


def test_the_copies_are_snakemake_workflows():
    assert {
        "test_priority",
        "test_delete_output",
        "test_github_issue2142",
        "test_github_issue2732",
    } <= set(NAMES)
    assert sys.executable


@pytest.mark.parametrize("name", NAMES)
def test_a_fresh_site_with_the_store_ends_like_one_without(tmp_path, name):
    sites = {s: tmp_path / s for s in "abc"}
    for site in sites.values():
        shutil.copytree(UPSTREAM / name, site, symlinks=True)
    store = tmp_path / "store"
    a = run(sites["a"], store)
    assert a.returncode == 0, a.stdout + a.stderr
    b = run(sites["b"], store)
    c = run(sites["c"], None)
    assert b.returncode == c.returncode, b.stdout + b.stderr
    got, expected = listing(sites["b"]), listing(sites["c"])
    differing = {k: (got.get(k), expected.get(k)) for k in got.keys() | expected.keys()}
    differing = {k: v for k, v in differing.items() if v[0] != v[1]}
    assert not differing, f"{name}: {differing}\n{b.stdout + b.stderr}"


def test_a_workdir_directive_is_stored_and_restored_where_jobs_run(tmp_path):
    """A Snakefile with `workdir: "sub"`: the store was keyed and watched from where
    Snakemake started, so every job counted sub/.snakemake's metadata as an undeclared write
    and was never stored (safe, but the store never helped)."""
    snakefile = (
        'workdir: "sub"\n\nrule all:\n    input: "out.txt"\n\n'
        'rule a:\n    output: "out.txt"\n    shell: "echo hi > {output}"\n'
    )
    sites = {s: tmp_path / s for s in "abc"}
    for site in sites.values():
        (site / "sub").mkdir(parents=True)
        (site / "Snakefile").write_text(snakefile)
    store = tmp_path / "store"
    a = run(sites["a"], store)
    assert a.returncode == 0 and "0 job(s) restored, 1 stored" in a.stdout + a.stderr, a.stderr
    b = run(sites["b"], store)
    assert "restored 1 job(s) before scheduling" in b.stdout + b.stderr, b.stdout + b.stderr
    c = run(sites["c"], None)
    assert b.returncode == c.returncode == 0
    assert listing(sites["b"]) == listing(sites["c"])
    assert (sites["b"] / "sub" / "out.txt").read_text() == "hi\n"
