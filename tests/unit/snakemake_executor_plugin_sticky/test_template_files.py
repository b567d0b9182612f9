"""What a template's build created on disk, compared after every job (_template_files), and
the build watch that finds it (_audit.WriteWatch.created)."""

import os
import tempfile
from pathlib import Path

from snakemake_executor_plugin_sticky import _audit, _template_files
from snakemake_executor_plugin_sticky._template_files import BuildFiles


def built(tmp_path: Path, body) -> list[str]:
    """The paths ``body`` created, as the worker's build watch sees them."""
    watch = _audit.start_build(str(tmp_path))
    try:
        body()
    finally:
        _audit.stop()
    return watch.created()


def test_the_build_watch_names_what_it_created_wherever_it_is(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "existing.txt").write_text("old\n")
    made: dict[str, str] = {}

    def body():
        made["tmp"] = tempfile.mkdtemp(prefix="tf-")  # the temporary directory: counted too
        Path(made["tmp"], "vocab.txt").write_text("a\n")
        Path("cache.bin").write_bytes(b"x")
        with open("existing.txt", "a") as f:  # there before: not the build's own
            f.write("more\n")
        Path("scratch.tmp").write_text("gone")
        os.remove("scratch.tmp")  # created and removed: nothing left to watch
        os.makedirs("__pycache__", exist_ok=True)
        Path("__pycache__/m.pyc").write_bytes(b"")

    created = built(tmp_path, body)
    assert sorted(created) == sorted(
        [made["tmp"], os.path.join(made["tmp"], "vocab.txt"), str(tmp_path / "cache.bin")]
    )


def test_an_invocation_watch_names_no_created_paths(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    job = type("Job", (), {"output": [], "log": []})()
    watch = _audit.start(str(tmp_path), job)
    Path("side.txt").write_text("x")
    _audit.stop()
    assert watch.created() == []


def test_a_change_removal_or_new_entry_is_found_and_reading_is_not(tmp_path):
    folder = tmp_path / "scratch"
    folder.mkdir()
    data = tmp_path / "vocab.txt"
    data.write_text("alpha\n")
    files = BuildFiles.after_build("t", [str(folder), str(data)])
    data.read_text()
    os.listdir(folder)
    assert files.changed() == []
    (folder / "part-1.txt").write_text("1\n")
    assert files.changed() == [f"{folder} (changed)"]
    data.unlink()
    assert files.changed() == [f"{folder} (changed)", f"{data} (removed)"]


def test_a_rewrite_of_the_same_size_is_found_by_its_time(tmp_path):
    data = tmp_path / "state.json"
    data.write_text("{}")
    os.utime(data, ns=(1_000_000_000, 1_000_000_000))
    files = BuildFiles.after_build("t", [str(data)])
    data.write_text("[]")
    assert files.changed() == [f"{data} (changed)"]


def test_at_most_the_cap_shallowest_first(tmp_path, monkeypatch):
    monkeypatch.setattr(_template_files, "MAX_WATCHED", 2)
    deep = tmp_path / "a" / "b" / "c.txt"
    deep.parent.mkdir(parents=True)
    deep.write_text("c")
    files = BuildFiles.after_build("t", [str(deep), str(tmp_path / "a" / "b"), str(tmp_path / "a")])
    assert list(files.states) == [str(tmp_path / "a"), str(tmp_path / "a" / "b")]


def test_multiprocessings_own_folder_is_left_out(tmp_path, monkeypatch):
    pymp = tmp_path / "pymp-abc"
    pymp.mkdir()
    monkeypatch.setattr(_template_files, "_multiprocessing_tempdir", lambda: str(pymp))
    files = BuildFiles.after_build("t", [str(pymp), str(pymp / "listener-1"), str(tmp_path)])
    assert list(files.states) == [str(tmp_path)]


def test_the_retire_reason_names_the_template_the_paths_and_the_remedy():
    reason = _template_files.describe("llm", [f"/tmp/p{i} (changed)" for i in range(5)])
    assert "template 'llm'" in reason and "/tmp/p0 (changed)" in reason
    assert "/tmp/p3" not in reason and "and 2 more" in reason
    assert "make such files in the job" in reason


def test_the_build_watch_names_what_it_read_listed_connected_to_or_rewrote(tmp_path, monkeypatch):
    import sqlite3

    monkeypatch.chdir(tmp_path)
    for name in ("weights.json", "status.txt"):
        (tmp_path / name).write_text("{}")
    (tmp_path / "shards").mkdir()

    def body():
        Path("weights.json").read_text()
        os.listdir("shards")
        with open("status.txt", "w") as f:  # there before: used, not created
            f.write("ready\n")
        con = sqlite3.connect("done.db")
        con.execute("pragma journal_mode=wal")
        con.execute("create table if not exists t (x)")
        con.commit()
        con.close()

    watch = _audit.start_build(str(tmp_path))
    try:
        body()
    finally:
        _audit.stop()
    used = set(watch.used())
    assert {str(tmp_path / n) for n in ("weights.json", "shards", "status.txt")} <= used
    assert str(tmp_path / "done.db") in used | set(watch.created())


def test_a_same_size_rewrite_with_the_old_time_is_found_by_its_contents(tmp_path):
    data = tmp_path / "weights.bin"
    data.write_bytes(b"base-a")
    os.utime(data, ns=(1_000_000_000, 1_000_000_000))
    files = BuildFiles.after_build("t", [], [str(data)])
    os.link(data, tmp_path / "staged")  # a link added and removed: its inode only
    os.unlink(tmp_path / "staged")
    assert files.changed() == []
    data.write_bytes(b"base-b")  # as an archive extracted with its stored times
    os.utime(data, ns=(1_000_000_000, 1_000_000_000))
    assert files.changed() == [f"{data} (changed)"]


def test_a_path_made_after_the_build_where_it_used_nothing_is_a_change(tmp_path):
    files = BuildFiles("t", {str(tmp_path / "late.txt"): None})
    assert files.changed() == []
    (tmp_path / "late.txt").write_text("x")
    assert files.changed() == [f"{tmp_path / 'late.txt'} (created)"]


def built_watch(tmp_path: Path, body) -> _audit.WriteWatch:
    watch = _audit.start_build(str(tmp_path))
    try:
        body()
    finally:
        _audit.stop()
    return watch


def after(watch: _audit.WriteWatch) -> BuildFiles:
    """The build's files as the worker notes them."""
    return BuildFiles.after_build(
        "t",
        watch.created(),
        watch.used(),
        listed=watch.reads or {},
        temporary=sorted(watch.temporary or ()),
    )


def test_a_fixed_folder_the_build_made_counts_only_the_jobs_own_entries(tmp_path, monkeypatch):
    """A folder made under a fixed name and not listed (a record of builds): another
    worker's entry is not the job's change (a fresh build sees the same folder); the job's
    own entry, its removal, or an unknown writer is."""
    monkeypatch.chdir(tmp_path)
    files = after(built_watch(tmp_path, lambda: os.makedirs("records", exist_ok=True)))
    assert files.fixed_folders == {str(tmp_path / "records")}
    (tmp_path / "records" / "other-worker").write_text("x")  # not by the job
    assert files.changed(frozenset()) == []
    assert files.changed(None) == [f"{tmp_path / 'records'} (changed)"]  # writer not known
    job = type("Job", (), {"output": [], "log": []})()
    watch = _audit.start(str(tmp_path), job)
    Path("records/mine").write_text("y")
    _audit.stop()
    assert watch.wrote_in is not None and str(tmp_path / "records") in watch.wrote_in
    assert files.changed(frozenset(watch.wrote_in)) == [f"{tmp_path / 'records'} (changed)"]
    os.rename(tmp_path / "records", tmp_path / "moved")
    os.mkdir(tmp_path / "records")  # replaced: another inode, whoever did it
    assert files.changed(frozenset()) == [f"{tmp_path / 'records'} (changed)"]


def test_a_listed_or_temporary_folder_counts_every_entry(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    made: dict[str, str] = {}

    def body():
        os.makedirs("listed", exist_ok=True)
        os.listdir("listed")  # its listing is part of the state
        made["tmp"] = tempfile.mkdtemp(prefix="tf-", dir=str(tmp_path))
        os.mkdir(os.path.join(made["tmp"], "sub"))

    watch = built_watch(tmp_path, body)
    assert watch.temporary == {made["tmp"]}
    files = after(watch)
    assert files.fixed_folders == frozenset()
    (tmp_path / "listed" / "new").write_text("x")
    Path(made["tmp"], "sub", "new").write_text("x")  # a job's subprocess, unseen by audit
    assert sorted(files.changed(frozenset())) == sorted(
        [f"{tmp_path / 'listed'} (changed)", f"{os.path.join(made['tmp'], 'sub')} (changed)"]
    )


def test_a_write_relative_to_a_folder_descriptor_leaves_where_unknown(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    job = type("Job", (), {"output": [], "log": []})()
    watch = _audit.start(str(tmp_path), job)
    fd = os.open(str(tmp_path), os.O_RDONLY)
    try:
        os.mkdir("sub", dir_fd=fd)
    finally:
        os.close(fd)
        _audit.stop()
    assert watch.wrote_in is None


def test_a_small_file_written_again_with_the_same_bytes_is_not_a_change(tmp_path):
    """Another worker's build writes the same file again: only its time moved."""
    data = tmp_path / "state.txt"
    data.write_text("built\n")
    files = BuildFiles.after_build("t", [str(data)])
    before = os.stat(data)
    os.utime(data, ns=(before.st_atime_ns, before.st_mtime_ns + 10**9))
    assert files.changed(frozenset()) == []
    data.write_text("BUILT\n")  # same size, other bytes
    assert files.changed(frozenset()) == [f"{data} (changed)"]
