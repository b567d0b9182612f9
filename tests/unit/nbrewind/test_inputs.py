"""Input files carried in the store (`pack --with-inputs`) and put back at another site, and the
error of a failed workflow cell: the pure parts, on files, without kernels."""

import os
import posixpath

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ckptstore import CheckpointStore, file_digest
from nbrewind._inputs import (
    InputError,
    InputFile,
    bundle,
    notebook_inputs,
    relative_inside,
    restore_missing,
)
from nbrewind._workflow_cell import log_dirs, workflow_error
from tests.conftest import examples

_segments = st.sampled_from(["a", "b.txt", "..", ".", "", "data", "~", "x y", ".hidden"])


@settings(max_examples=examples(300), deadline=None)
@given(parts=st.lists(_segments, min_size=0, max_size=6), absolute=st.booleans())
def test_only_paths_that_stay_inside_the_working_directory_are_restorable(parts, absolute):
    path = ("/" if absolute else "") + "/".join(parts)
    rel = relative_inside(path)
    base = "/site/work"
    if rel is None:
        assert path.startswith("/") or ".." in parts or all(p in ("", ".") for p in parts)
        return
    joined = posixpath.normpath(posixpath.join(base, str(rel)))
    assert joined.startswith(base + "/"), (path, joined)
    assert ".." not in rel.parts and not rel.is_absolute()
    assert posixpath.normpath(path) == str(rel)


def _site(root, files):
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


@settings(max_examples=examples(8), deadline=None)
@given(
    files=st.dictionaries(
        st.sampled_from(["raw.csv", "data/a.txt", "data/deep/b.json", "c"]),
        st.text(max_size=50),
        min_size=1,
    )
)
def test_bundled_inputs_come_back_byte_identical_at_a_site_without_them(tmp_path_factory, files):
    a = _site(tmp_path_factory.mktemp("a"), files)
    b = tmp_path_factory.mktemp("b")
    records = [(i, {"files_read": {n: file_digest(a / n)}}) for i, n in enumerate(files)]
    store = b / ".nbrewind"
    assert bundle(list(notebook_inputs(records)), a, store) == (len(files), [])
    for _, record in records:
        restore_missing(record, b, [store])
    for name in files:
        assert (b / name).read_bytes() == (a / name).read_bytes()


def test_restoring_never_overwrites_leaves_the_directory_or_trusts_a_damaged_object(tmp_path):
    a = _site(tmp_path / "a", {"in.txt": "input"})
    digest = file_digest(a / "in.txt")
    store = tmp_path / "store"
    bundle([InputFile("in.txt", digest, 1)], a, store)

    b = tmp_path / "b"
    outside = tmp_path / "outside"
    outside.mkdir()
    b.mkdir()
    (b / "escape").symlink_to(outside)
    (b / "kept.txt").write_text("mine")
    record = {
        "files_read": {
            "kept.txt": digest,  # exists: never replaced
            "escape/in.txt": digest,  # through a symlink out of the directory
            "../in.txt": digest,
            str(tmp_path / "abs.txt"): digest,
            "sub/in.txt": digest,  # the one that is restored
            "absent.txt": "sha256:" + "0" * 64,  # not in the store
        }
    }
    restored = restore_missing(record, b, [store])
    assert restored == [("sub/in.txt", digest)]
    assert (b / "kept.txt").read_text() == "mine"
    assert not (outside / "in.txt").exists() and not (tmp_path / "in.txt").exists()
    assert not (tmp_path / "abs.txt").exists() and not (b / "absent.txt").exists()

    obj = CheckpointStore(store).object_path(digest)
    os.chmod(obj, 0o644)
    obj.write_text("altered")
    assert restore_missing({"files_read": {"again.txt": digest}}, b, [store]) == []
    assert not (b / "again.txt").exists()


def test_bundling_refuses_an_input_changed_since_it_was_read(tmp_path):
    a = _site(tmp_path / "a", {"in.txt": "then"})
    item = InputFile("in.txt", file_digest(a / "in.txt"), 3)
    (a / "in.txt").write_text("now")
    with pytest.raises(InputError, match="changed since cell 3 read it"):
        bundle([item], a, tmp_path / "store")
    with pytest.raises(InputError, match="--cwd"):
        bundle([InputFile("gone.txt", item.digest, 4)], a, tmp_path / "store")
    assert bundle([InputFile("/etc/hostname", item.digest, 5)], a, tmp_path / "s") == (
        0,
        ["/etc/hostname"],
    )


def test_the_workflow_error_is_snakemakes_own_error_block():
    log = (
        "Building DAG of jobs...\nUsing shell: /usr/bin/bash\nError in rule a:\n"
        "    jobid: 1\n    output: out.txt\nShutting down, this might take some time.\n"
        "Exiting because a job execution failed. Look above for error messages\n"
        "Complete log(s): /x/.snakemake/log/1.snakemake.log\nWorkflowError:\n"
        "At least one job did not complete successfully.\n"
    )
    error = workflow_error(log)
    assert error is not None and error.startswith("Error in rule a:")
    assert "WorkflowError:" in error and "Complete log" not in error
    assert workflow_error("MissingInputException in rule a in file x, line 3:\n  a\n")
    assert workflow_error("Error: no Snakefile found, tried Snakefile.\n")
    assert workflow_error("3 of 3 steps (100%) done\nNothing to be done.\n") is None
    assert workflow_error("checkpoints: 2 job(s) restored, 0 stored\n") is None


def test_logs_are_looked_for_where_the_command_runs_snakemake(tmp_path):
    dirs = log_dirs("cd wf && python -m snakemake -d sub --directory=other 2>&1 | tail", tmp_path)
    assert dirs == [tmp_path / d / ".snakemake" / "log" for d in (".", "wf", "sub", "other")]


def test_pack_with_inputs_on_the_command_line(tmp_path, monkeypatch, capsys):
    import nbformat

    from nbrewind._cli import main

    monkeypatch.setenv("NBREWIND_KEY_FILE", str(tmp_path / "keys" / "key"))
    a = _site(tmp_path / "a", {"data/raw.txt": "1 2 3\n"})
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell('raw = open("data/raw.txt").read()')
    cell.metadata["nbrewind"] = {
        "files_read": {"data/raw.txt": file_digest(a / "data" / "raw.txt"), "/etc/x": "sha256:0"},
        "writes": {},
    }
    nb.cells.append(cell)
    nbformat.write(nb, str(a / "out.ipynb"))
    dest = tmp_path / "b" / "nb.ipynb"
    assert main(["pack", str(a / "out.ipynb"), str(dest), "--bundle", "--with-inputs"]) == 0
    out, err = capsys.readouterr()
    assert "1 input file(s) bundled in .nbrewind/" in out
    assert "1 input(s) named by an absolute path not bundled" in err
    assert restore_missing(cell.metadata["nbrewind"], tmp_path / "b", [dest.parent / ".nbrewind"])

    (a / "data" / "raw.txt").write_text("changed\n")
    assert (
        main(["pack", str(a / "out.ipynb"), str(tmp_path / "c" / "nb.ipynb"), "--with-inputs"]) == 2
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "changed since cell 0 read it" in err
    assert not (tmp_path / "c" / "nb.ipynb").exists(), "nothing half-written"


def test_files_an_earlier_cell_wrote_or_that_were_absent_are_not_inputs():
    records = [
        (1, {"files_read": {"raw.txt": "sha256:1", "probe.txt": None}}),
        (2, {"files_read": {}, "files_written": {"made.txt": "sha256:2"}}),
        (3, {"files_read": {"made.txt": "sha256:2", "raw.txt": "sha256:1", "late.txt": "d"}}),
    ]
    assert list(notebook_inputs(records)) == [
        InputFile("raw.txt", "sha256:1", 1),
        InputFile("late.txt", "d", 3),
    ]


def test_a_missing_input_is_named_as_missing_and_a_recorded_absence_is_not_a_change():
    from nbrewind import CellFacts, Trust, decide
    from nbrewind._record import FORMAT_VERSION

    record = {
        "v": FORMAT_VERSION,
        "source": "s",
        "python": "3.11",
        "packages": {},
        "reads": {},
        "files_read": {"in.csv": "sha256:f1", "probe.txt": None},
        "writes": {},
        "outputs": "o",
    }
    facts = CellFacts(record, "s", False, False, Trust.TRUSTED, "o", True, frozenset())
    env = {"python": "3.11.7", "packages": {}}
    missing = decide(facts, {}, {}, lambda p: None, env)
    assert missing.action == "run" and "in.csv, which is missing here" in missing.reason
    assert "--with-inputs" in missing.reason
    present = decide(facts, {}, {}, {"in.csv": "sha256:f1"}.get, env)
    assert present.action == "restore", present.reason
    changed = decide(facts, {}, {}, {"in.csv": "sha256:f2"}.get, env)
    assert changed.reason == "reads file in.csv, which changed"
    outside = dict(record, files_read={"/elsewhere/in.csv": "sha256:f1"})
    facts = CellFacts(outside, "s", False, False, Trust.TRUSTED, "o", True, frozenset())
    gone = decide(facts, {}, {}, lambda p: None, env)
    assert "/elsewhere/in.csv, which is missing here" in gone.reason
    assert "no pack carries it" in gone.reason and "--with-inputs" not in gone.reason


def test_pack_with_inputs_of_format_2_records(tmp_path, monkeypatch):
    """Absolute paths are left out and counted, files an earlier cell wrote or deleted are not
    inputs (a file read and then written by the same cell is), and the files the cells wrote
    that the store kept travel with the notebook."""
    import nbformat

    from nbrewind import pack
    from nbrewind._objects import put_file
    from nbrewind._record import FORMAT_VERSION

    monkeypatch.setenv("NBREWIND_KEY_FILE", str(tmp_path / "keys" / "key"))
    a = _site(
        tmp_path / "a",
        {"raw.csv": "1,2\n", "log.txt": "old\n", "made.csv": "made\n", "big.bin": "big"},
    )
    d = {name: file_digest(a / name) for name in ("raw.csv", "log.txt", "made.csv", "big.bin")}
    put_file(a / "made.csv", d["made.csv"], a / ".nbrewind")  # kept by the audit kernel
    rows = [
        {  # reads raw.csv and log.txt (then rewrites log.txt), writes made.csv and big.bin
            "files_read": {"raw.csv": d["raw.csv"], "log.txt": d["log.txt"], "/etc/x": "sha256:0"},
            "files_written": {
                "log.txt": d["log.txt"],
                "made.csv": d["made.csv"],
                "big.bin": d["big.bin"],
                "gone.tmp": None,
            },
        },
        {  # reads what cell 0 wrote or deleted, and a file that did not exist
            "files_read": {"made.csv": d["made.csv"], "gone.tmp": None, "probe": None},
            "files_written": {"/tmp/elsewhere": "sha256:1"},
        },
    ]
    nb = nbformat.v4.new_notebook()
    for row in rows:
        cell = nbformat.v4.new_code_cell("pass")
        cell.metadata["nbrewind"] = dict(row, v=FORMAT_VERSION, writes={})
        nb.cells.append(cell)
    nbformat.write(nb, str(a / "out.ipynb"))
    assert [(i.path, i.cell) for i in notebook_inputs(list(enumerate(rows)))] == [
        ("raw.csv", 0),
        ("log.txt", 0),
        ("/etc/x", 0),
    ]
    counts = pack(a / "out.ipynb", tmp_path / "b" / "nb.ipynb", with_inputs=True)
    assert counts["inputs"] == 2 and counts["inputs_skipped"] == 1
    assert counts["files_written"] == 1, "made.csv (log.txt went as an input)"
    store = CheckpointStore(tmp_path / "b" / ".nbrewind", create=False)
    assert all(store.has(d[n]) for n in ("raw.csv", "log.txt", "made.csv"))
    assert not store.has(d["big.bin"]), "not kept by the audit: its writer re-executes"


def test_a_file_an_earlier_cell_wrote_is_not_put_back_for_its_reader(tmp_path):
    a = _site(tmp_path / "a", {"made.txt": "by cell 1"})
    digest = file_digest(a / "made.txt")
    bundle([InputFile("made.txt", digest, 2)], a, tmp_path / "store")
    b = tmp_path / "b"
    b.mkdir()
    record = {"files_read": {"made.txt": digest}}
    assert restore_missing(record, b, [tmp_path / "store"], produced={"made.txt"}) == []
    assert not (b / "made.txt").exists()
