"""``upstream/snakemake/make-branch.sh``: the branch of the patch proposed upstream, created
from the installed Snakemake (9.27.1) in a scratch repository: released files, then patched
files, the patch checked to apply cleanly; nothing created when it cannot be."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import snakemake

from tests.conftest import REPO

SCRIPT = REPO / "upstream" / "snakemake" / "make-branch.sh"
PATCH = REPO / "upstream" / "snakemake" / "scheduling-per-round.patch"
BRANCH = "upstream/snakemake-scheduling-per-round"
INSTALLED = Path(snakemake.__file__).parent
GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.org",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.org",
}

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(
        snakemake.__version__ != "9.27.1", reason="the patch is against Snakemake 9.27.1"
    ),
]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True, env=GIT_ENV
    ).stdout


def make_branch(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(SCRIPT), "--repo", str(repo), *args],
        capture_output=True,
        text=True,
        env=GIT_ENV,
        timeout=60,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "f").write_text("x\n")
    git(repo, "add", "f")
    git(repo, "commit", "-q", "-m", "init")
    return repo


def touched_files() -> list[str]:
    return [
        line.split()[1][2:] for line in PATCH.read_text().splitlines() if line.startswith("+++ ")
    ]


def test_the_branch_holds_the_released_files_then_the_patched_ones(
    repo: Path, tmp_path: Path
) -> None:
    proc = make_branch(repo)
    assert proc.returncode == 0, proc.stderr
    assert git(repo, "rev-list", "--count", BRANCH) == "2\n"
    files = touched_files()
    assert sorted(git(repo, "ls-tree", "-r", "--name-only", BRANCH).split()) == sorted(files)
    # Patched as bench/_patched_snakemake.py patches the installed package (patch -p2).
    overlay = tmp_path / "overlay"
    shutil.copytree(INSTALLED, overlay / "snakemake")
    subprocess.run(["patch", "--silent", "-p2", "-d", str(overlay), "-i", str(PATCH)], check=True)
    for f in files:
        released = (INSTALLED.parent / f.removeprefix("src/")).read_text()
        patched = (overlay / f.removeprefix("src/")).read_text()
        assert git(repo, "show", f"{BRANCH}~1:{f}") == released
        assert git(repo, "show", f"{BRANCH}:{f}") == patched
        assert released != patched
    # The current branch, its index and working tree are untouched.
    assert git(repo, "branch", "--show-current") == "main\n"
    assert git(repo, "status", "--porcelain") == ""
    # An existing branch is kept unless --force.
    head = git(repo, "rev-parse", BRANCH)
    again = make_branch(repo)
    assert again.returncode != 0 and "exists" in again.stderr
    assert git(repo, "rev-parse", BRANCH) == head
    assert make_branch(repo, "--force").returncode == 0


def test_another_version_or_a_patch_that_does_not_apply_creates_nothing(
    repo: Path, tmp_path: Path
) -> None:
    source = tmp_path / "site" / "snakemake"
    shutil.copytree(INSTALLED, source, ignore=shutil.ignore_patterns("__pycache__"))
    init = source / "__init__.py"
    init.write_text(init.read_text().replace('"9.27.1"', '"9.99.0"'))
    proc = make_branch(repo, "--source", str(source))
    assert proc.returncode != 0 and "9.99.0" in proc.stderr
    init.write_text(init.read_text().replace('"9.99.0"', '"9.27.1"'))
    dag = source / "dag.py"
    dag.write_text(dag.read_text().replace("self._ready_jobs", "self._ready_jobs_renamed"))
    proc = make_branch(repo, "--source", str(source.parent))
    assert proc.returncode != 0 and "does not apply cleanly" in proc.stderr
    assert git(repo, "branch", "--list", BRANCH) == ""
