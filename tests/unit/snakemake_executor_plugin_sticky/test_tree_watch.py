"""Undeclared writes of jobs outside sticky workers, seen by comparing the working directory
at their start and end (issue 26, part 3)."""

import os

from snakemake_executor_plugin_sticky._tree_watch import (
    REUSE_S,
    Declared,
    TreeWatch,
    changed,
    scan,
)


def test_scan_sees_files_links_and_folders_and_skips_what_it_is_told(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "f").write_text("x")
    (tmp_path / ".snakemake").mkdir()
    (tmp_path / ".snakemake" / "log").write_text("x")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "m.pyc").write_text("x")
    os.symlink("a/f", tmp_path / "link")
    found = scan(str(tmp_path), [str(tmp_path / ".snakemake")])
    assert set(found) == {"a/", "a/f", "link"}


def test_changed_names_created_removed_and_modified_paths(tmp_path):
    (tmp_path / "keep").write_text("x")
    (tmp_path / "edit").write_text("x")
    (tmp_path / "gone").write_text("x")
    before = scan(str(tmp_path), [])
    (tmp_path / "edit").write_text("longer")
    (tmp_path / "gone").unlink()
    (tmp_path / "new").write_text("x")
    os.chmod(tmp_path / "keep", 0o600)  # a mode change is a change (cp -p copies it)
    assert changed(before, scan(str(tmp_path), [])) == ["edit", "gone", "keep", "new"]


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_a_job_is_charged_with_undeclared_changes_made_while_it_ran(tmp_path):
    clock = Clock()
    declared = Declared(["out/a.txt", "logs/a.log"], ["out/dir"])
    watch = TreeWatch(str(tmp_path), declared, clock=clock)
    watch.started("job-a")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "a.txt").write_text("declared")
    (tmp_path / "out" / "dir").mkdir()
    (tmp_path / "out" / "dir" / "inside").write_text("declared by directory()")
    (tmp_path / "order.out").write_text("appended by the job")
    assert watch.ended("job-a") == ["order.out"]
    assert watch.ended("job-a") is None  # not watched any more


def test_jobs_running_side_by_side_share_what_changed_meanwhile(tmp_path):
    clock = Clock()
    watch = TreeWatch(str(tmp_path), Declared([], []), clock=clock)
    watch.started("a")
    watch.started("b")  # reuses a's scan: the same moment
    (tmp_path / "side").write_text("x")
    assert watch.ended("a") == ["side"]
    assert watch.ended("b") == ["side"]  # b ran while it changed: not stored either
    watch.started("c")  # starts from the scan a's end took
    assert watch.ended("c") == []


def test_an_old_scan_is_not_reused(tmp_path):
    scans = []

    def counting(root, skip):
        scans.append(root)
        return scan(root, skip)

    clock = Clock()
    watch = TreeWatch(str(tmp_path), Declared([], []), clock=clock, scanner=counting)
    watch.started("a")
    watch.started("b")
    assert len(scans) == 1
    clock.now += REUSE_S + 0.1
    (tmp_path / "before-c").write_text("x")  # written before c started: not c's
    watch.started("c")
    assert len(scans) == 2
    assert watch.ended("c") == []


def test_a_failed_job_is_forgotten(tmp_path):
    watch = TreeWatch(str(tmp_path), Declared([], []), clock=Clock())
    watch.started("a")
    watch.forget("a")
    assert watch.ended("a") is None


def test_an_undeclared_empty_folder_counts_and_an_outputs_folder_does_not(tmp_path):
    """Snakemake's test_delete_all_output leaves an empty some_dir/ behind; Snakemake itself
    creates the folders of declared outputs."""
    watch = TreeWatch(str(tmp_path), Declared(["out/sub/a.txt"], []), clock=Clock())
    watch.started("job")
    (tmp_path / "out" / "sub").mkdir(parents=True)
    (tmp_path / "out" / "sub" / "a.txt").write_text("declared")
    (tmp_path / "some_dir").mkdir()
    assert watch.ended("job") == ["some_dir/"]
