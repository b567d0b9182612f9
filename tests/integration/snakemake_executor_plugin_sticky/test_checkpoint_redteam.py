"""The independent red team's edits for checkpoint keys (issue 26; ``redteam26_cases.py``).

A helper that saw only README.md and docs/checkpoints.md (not the code, not the tests) wrote
workflows and edits a real workflow could undergo, and ran them through a harness: site A runs
the workflow with a store; site B, a fresh copy with the edit, runs with the store; site C,
the same copy, runs without it. B must end like C (exit status, every output's bytes and
mode); an edit marked ``changes_output=False`` must rerun nothing at B.

CI runs every other case that restored a stale output on the first pass (FIRST_PASS_STALE:
the fixes of issue 26 answer them all) and every twentieth of the others (the first pass's
unnecessary reruns among them), about 18 of 92 at about 10 s each, to fit CI's time;
``CKPT_REDTEAM_ALL=1`` runs them all (``python -m pytest`` with it, about 15 minutes here).
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import snakemake_command

sys.path.insert(0, str(Path(__file__).parent))
import redteam26_cases as rt  # noqa: E402

pytestmark = pytest.mark.integration

FIRST_PASS_FAILURES = {
    # filled from the first pass's report (see the module docstring of redteam26_cases)
    *rt.FIRST_PASS_STALE,
    *rt.FIRST_PASS_UNNEEDED,
}
KNOWN_UNNEEDED = rt.KNOWN_UNNEEDED
"""Edits that change nothing a job does but still rerun it (documented in docs/checkpoints.md:
never stale, only slower): not asserted for "rerun nothing"."""
NONDETERMINISTIC = rt.NONDETERMINISTIC
"""Cases whose fresh runs would differ from each other (none now): their outputs cannot be
compared, only their exit status."""

ALL = os.environ.get("CKPT_REDTEAM_ALL") == "1"
NAMES = sorted(rt.CASES)
STALE = sorted(rt.FIRST_PASS_STALE)
SELECTED = [
    n
    for i, n in enumerate(NAMES)
    if ALL or (n in rt.FIRST_PASS_STALE and STALE.index(n) % 2 == 0) or i % 20 == 0
]


def outputs(site: Path) -> dict[str, object]:
    found: dict[str, object] = {}
    out = site / "out"
    for path in sorted(out.rglob("*")) if out.exists() else []:
        rel = str(path.relative_to(site))
        if path.is_symlink():
            found[rel] = ("link", os.readlink(path))
        elif path.is_file():
            found[rel] = (path.read_bytes(), os.stat(path).st_mode & 0o7777)
        elif path.is_dir():
            found[rel + "/"] = ("dir", os.stat(path).st_mode & 0o7777)
    return found


def snakemake(site: Path, cores: int, store: "str | None") -> subprocess.CompletedProcess:
    args = ["--sticky-checkpoints", store] if store else []
    return subprocess.run(
        snakemake_command(*args, cores=cores),
        cwd=site,
        capture_output=True,
        text=True,
        timeout=600,
        stdin=subprocess.DEVNULL,
    )


def test_the_lists_name_real_cases():
    named = FIRST_PASS_FAILURES | set(KNOWN_UNNEEDED) | set(NONDETERMINISTIC)
    assert named <= set(rt.CASES), sorted(named - set(rt.CASES))


@pytest.mark.parametrize("name", SELECTED)
def test_red_team_edit_through_the_store_ends_like_a_fresh_run(tmp_path, name):
    assert_ends_like_a_fresh_run(
        tmp_path,
        name,
        rt.CASES[name],
        deterministic=name not in NONDETERMINISTIC,
        unneeded_known=name in KNOWN_UNNEEDED,
    )


def assert_ends_like_a_fresh_run(
    tmp_path: Path, name: str, case: dict, deterministic: bool = True, unneeded_known: bool = False
) -> None:
    """A red team's case (see the module docstring): site B, the edit with the store, ends
    like site C, the edit without it; an edit that changes no output reruns nothing."""
    site_a = tmp_path / "a"
    for rel, text in case["files"].items():
        (site_a / rel).parent.mkdir(parents=True, exist_ok=True)
        (site_a / rel).write_text(text)
    for rel, mode in case.get("modes", {}).items():
        os.chmod(site_a / rel, mode)
    store = str(tmp_path / "store")
    first = snakemake(site_a, case.get("cores_a", 2), store)
    assert first.returncode == 0, first.stdout + first.stderr
    site_b = tmp_path / "b"
    shutil.copytree(
        site_a,
        site_b,
        symlinks=True,
        ignore=shutil.ignore_patterns(".snakemake", "out", "__pycache__"),
    )
    for rel, old, new in case["edits"]:
        text = (site_b / rel).read_text()
        assert old in text, (rel, old)
        (site_b / rel).write_text(text.replace(old, new))
    for rel, mode in case.get("edit_modes", {}).items():
        os.chmod(site_b / rel, mode)
    site_c = tmp_path / "c"
    shutil.copytree(site_b, site_c, symlinks=True)
    with_store = snakemake(site_b, case.get("cores_b", 2), store)
    fresh = snakemake(site_c, case.get("cores_b", 2), None)
    said = with_store.stdout + with_store.stderr
    assert with_store.returncode == fresh.returncode, said
    if deterministic:
        got, expected = outputs(site_b), outputs(site_c)
        stale = {k: (got.get(k), expected.get(k)) for k in got.keys() | expected.keys()}
        stale = {k: v for k, v in stale.items() if v[0] != v[1]}
        assert not stale, f"{name} ({case['desc']}): restored stale {stale}\n{said[-3000:]}"
    if not case.get("changes_output", True) and not unneeded_known:
        reruns = [line for line in said.splitlines() if re.search(r"\) reruns: ", line)]
        assert not reruns, f"{name} ({case['desc']}): reran for nothing: {reruns}"
