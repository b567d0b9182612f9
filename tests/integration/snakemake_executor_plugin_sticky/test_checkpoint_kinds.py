"""Outputs that are not plain files, and jobs that write what they do not declare, through
real Snakemake runs with --sticky-checkpoints (issue 13, "Outputs that are not plain files")."""

import os
import re
import shutil
import stat
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

SNAKEFILE = """\
rule all:
    input:
        "tree",
        "latest",
        "side.txt",
        "clean.txt",


rule data:
    output:
        "data.txt",
    shell:
        "echo data > {output}"


rule tree:
    input:
        "data.txt",
    output:
        directory("tree"),
    shell:
        "mkdir -p tree/empty tree/sub && cp {input} tree/sub/f && chmod 750 tree/sub/f"
        " && ln -s sub/f tree/alias"


rule latest:
    input:
        "data.txt",
    output:
        "latest",
    shell:
        "ln -s data.txt {output}"


rule side:
    input:
        "data.txt",
    output:
        "side.txt",
    resources:
        sticky="t",
    script:
        "side.py"


rule clean:
    input:
        "data.txt",
    output:
        "clean.txt",
    resources:
        sticky="t",
    script:
        "clean.py"
"""

FILES = {
    "Snakefile": SNAKEFILE,
    "sticky_templates.py": (
        "from stickyinvoc import template\n\n\n@template\ndef t():\n    return {}\n"
    ),
    # The case: a side file the job appends to, which it does not declare.
    "side.py": (
        "import stickyinvoc\n\nstickyinvoc.state(snakemake)\n"
        'with open("order.out", "a") as f:\n    f.write("side ran\\n")\n'
        'with open(snakemake.output[0], "w") as f:\n    f.write("side\\n")\n'
    ),
    "clean.py": (
        "import os\n\nimport stickyinvoc\n\nstickyinvoc.state(snakemake)\n"
        'tmp = snakemake.output[0] + ".partial"\n'
        'with open(tmp, "w") as f:\n    f.write("clean\\n")\n'
        "os.replace(tmp, snakemake.output[0])  # an atomic write: nothing undeclared remains\n"
    ),
}


def counts(output: str) -> tuple[int, int]:
    m = re.search(r"checkpoints: (\d+) job\(s\) restored, (\d+) stored", output)
    assert m, output
    return int(m.group(1)), int(m.group(2))


def kind(path: Path) -> object:
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        return ("link", os.readlink(path))
    if stat.S_ISDIR(info.st_mode):
        return ("dir", stat.S_IMODE(info.st_mode), {p.name: kind(p) for p in path.iterdir()})
    return ("file", stat.S_IMODE(info.st_mode), path.read_bytes())


@pytest.fixture
def site_a(tmp_path, run_snakemake):
    wd = tmp_path / "site-a"
    wd.mkdir()
    for name, text in FILES.items():
        (wd / name).write_text(text)
    store = tmp_path / "store"
    run = run_snakemake(wd, "--sticky-checkpoints", str(store))
    assert run.returncode == 0, run.output
    return wd, store, run


def clone(wd: Path, to: Path) -> Path:
    to.mkdir(parents=True)
    for name in FILES:
        shutil.copy(wd / name, to / name)
    return to


def test_directory_and_symlink_outputs_restore_as_they_were_over_a_symlink(
    site_a, run_snakemake, tmp_path
):
    """Was: a directory output restored where a symlink to a directory stands crashed the run
    before scheduling (NotADirectoryError, a .tree.ckpt-* left behind); a symlink output came
    back as a regular file."""
    wd_a, store, _ = site_a
    wd_b = clone(wd_a, tmp_path / "site-b")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("not an output\n")
    os.symlink(elsewhere, wd_b / "tree")
    run = run_snakemake(wd_b, "--sticky-checkpoints", str(store))
    assert run.returncode == 0, run.output
    assert "rule tree:" not in run.output and "rule latest:" not in run.output, run.output
    for name in ["tree", "latest", "data.txt"]:
        assert kind(wd_b / name) == kind(wd_a / name), name
    assert kind(wd_b / "latest") == ("link", "data.txt")
    assert (wd_b / "tree" / "empty").is_dir()
    assert stat.S_IMODE((wd_b / "tree" / "sub" / "f").stat().st_mode) == 0o750
    assert os.listdir(elsewhere) == ["keep.txt"]  # replaced the link, did not write through it
    assert not [p for p in wd_b.rglob("*") if ".ckpt-" in p.name]


def test_a_job_writing_an_undeclared_file_is_not_stored_and_reruns_at_another_site(
    site_a, run_snakemake, tmp_path
):
    """Was: restored without its side file, so the restored site differed from a rerun."""
    wd_a, store, run_a = site_a
    assert re.search(
        r"rule side \(side.txt\) changed order.out, outside its declared", run_a.output
    )
    assert "rule clean (clean.txt) changed" not in run_a.output  # an atomic write: fine
    assert counts(run_a.output) == (0, 4)  # data, tree, latest, clean; not side
    wd_b = clone(wd_a, tmp_path / "site-b")
    run = run_snakemake(wd_b, "--sticky-checkpoints", str(store))
    assert run.returncode == 0, run.output
    assert counts(run.output) == (4, 0)
    assert "rule side:" in run.output and "rule clean:" not in run.output
    # As a fresh run leaves it: the side file written once, the outputs the same.
    assert (wd_b / "order.out").read_text() == "side ran\n"
    for name in ["side.txt", "clean.txt"]:
        assert (wd_b / name).read_text() == (wd_a / name).read_text()
