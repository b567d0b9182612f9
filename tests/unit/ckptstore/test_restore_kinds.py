"""Every output kind comes back as it was: files with their modes, directories with their empty
subdirectories, symbolic links as links (target kept), whatever stood at the output's path
before; and no staging leftover ever remains, also when a restore fails half-way.

The generated cases (hypothesis) compare a restored site with the original, entry by entry:
kind, permission bits, link target, bytes."""

import os
import stat
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ckptstore import CheckpointStore, CorruptObjectError, _materialise
from tests.conftest import examples

KEY = "a" * 64


def listing(path: Path) -> object:
    """What a path is, recursively: the thing a restore must reproduce exactly."""
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):
        return ("link", os.readlink(path))
    mode = stat.S_IMODE(info.st_mode)
    if stat.S_ISDIR(info.st_mode):
        return ("dir", mode, {p.name: listing(p) for p in sorted(path.iterdir())})
    return ("file", mode, path.read_bytes())


def leftovers(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if _materialise.STAGE_MARK in p.name]


# ---- generated: random outputs, random things standing in their way ------------------------

names = st.sampled_from(["a", "b", "c.txt", "d.bin", "sub"])
file_modes = st.sampled_from([0o644, 0o600, 0o755, 0o444, 0o640])
dir_modes = st.sampled_from([0o755, 0o700, 0o555])
link_targets = st.sampled_from(["a", "../x", "sub/c.txt", "/nonexistent/elsewhere", "missing"])

trees = st.recursive(
    st.one_of(
        st.tuples(st.just("file"), file_modes, st.binary(max_size=64)),
        st.tuples(st.just("link"), link_targets),
    ),
    lambda children: st.tuples(
        st.just("dir"), dir_modes, st.dictionaries(names, children, max_size=3)
    ),
    max_leaves=6,
)
in_the_way = st.sampled_from(
    ["nothing", "file", "dir", "link-to-dir", "link-to-file", "dangling-link", "stale-stage"]
)


def make(path: Path, spec: tuple) -> None:
    if spec[0] == "file":
        path.write_bytes(spec[2])
        os.chmod(path, spec[1])
    elif spec[0] == "link":
        os.symlink(spec[1], path)
    else:
        path.mkdir()
        for name, child in spec[2].items():
            make(path / name, child)
        os.chmod(path, spec[1])


def obstruct(target: Path, how: str, elsewhere: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if how == "file":
        target.write_text("old\n")
    elif how == "dir":
        (target / "old" / "deep").mkdir(parents=True)
        (target / "old" / "deep" / "f").write_text("old\n")
    elif how == "link-to-dir":
        os.symlink(elsewhere, target)
    elif how == "link-to-file":
        os.symlink(elsewhere / "keep.txt", target)
    elif how == "dangling-link":
        os.symlink("nowhere", target)
    elif how == "stale-stage":  # what a killed restore left
        (target.parent / f".{target.name}.ckpt-0123abcd").mkdir()
        (target.parent / f".{target.name}.ckpt-0123abcd" / "half").write_text("x")


@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    outputs=st.dictionaries(st.sampled_from(["o1", "res/o2", "o3"]), trees, min_size=1, max_size=3),
    how=in_the_way,
)
def test_generated_outputs_come_back_as_they_were(tmp_path_factory, outputs, how):
    base = tmp_path_factory.mktemp("kinds")
    store = CheckpointStore(base / "store")
    site_a, site_b, elsewhere = base / "a", base / "b", base / "elsewhere"
    for sub in (site_a, site_b, elsewhere):
        sub.mkdir()
    (elsewhere / "keep.txt").write_text("not an output\n")
    for name, spec in outputs.items():
        (site_a / name).parent.mkdir(parents=True, exist_ok=True)
        make(site_a / name, spec)
        obstruct(site_b / name, how, elsewhere)
    store.record(KEY, {n: n for n in outputs}, site_a)
    assert store.restore(KEY, site_b) is not None
    for name in outputs:
        assert listing(site_b / name) == listing(site_a / name), name
    assert not leftovers(site_b)
    # What a replaced link pointed to is untouched: the link was replaced, not followed.
    assert (elsewhere / "keep.txt").read_text() == "not an output\n"
    assert sorted(p.name for p in elsewhere.iterdir()) == ["keep.txt"]


# ---- the cases of the issue, by hand ----------------------------------------------------------


def test_directory_output_over_a_symlink_to_a_directory(tmp_path):
    """Was: NotADirectoryError from os.replace, a .NAME.ckpt-* directory left behind."""
    store = CheckpointStore(tmp_path / "store")
    (tmp_path / "a" / "out" / "empty").mkdir(parents=True)
    (tmp_path / "a" / "out" / "f.txt").write_text("new\n")
    store.record(KEY, {"out": "out"}, tmp_path / "a")
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "old.txt").write_text("old\n")
    (tmp_path / "b").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "b" / "out")
    store.restore(KEY, tmp_path / "b")
    assert not (tmp_path / "b" / "out").is_symlink()
    assert (tmp_path / "b" / "out" / "f.txt").read_text() == "new\n"
    assert (tmp_path / "b" / "out" / "empty").is_dir()  # empty directories come back too
    assert (tmp_path / "real" / "old.txt").read_text() == "old\n"  # not written through
    assert not leftovers(tmp_path / "b")


def test_symlink_output_comes_back_as_a_symlink_with_its_target(tmp_path):
    """Was: restored as a regular file holding the target's bytes."""
    store = CheckpointStore(tmp_path / "store")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "data.txt").write_text("data\n")
    os.symlink("data.txt", tmp_path / "a" / "latest")
    store.record(KEY, {"data.txt": "data.txt", "latest": "latest"}, tmp_path / "a")
    (tmp_path / "b").mkdir()
    store.restore(KEY, tmp_path / "b")
    assert os.readlink(tmp_path / "b" / "latest") == "data.txt"
    assert (tmp_path / "b" / "latest").read_text() == "data\n"


def test_file_mode_is_restored(tmp_path):
    store = CheckpointStore(tmp_path / "store")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(tmp_path / "a" / "run.sh", 0o750)
    store.record(KEY, {"run.sh": "run.sh"}, tmp_path / "a")
    (tmp_path / "b").mkdir()
    store.restore(KEY, tmp_path / "b")
    assert stat.S_IMODE((tmp_path / "b" / "run.sh").stat().st_mode) == 0o750


def test_manifest_without_kinds_restores_as_before(tmp_path):
    """Manifests written before kinds existed ({"file"}, {"tree"} only) still restore."""
    store = CheckpointStore(tmp_path / "store")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "x").write_text("x\n")
    digest = store.put_file(tmp_path / "src" / "x")
    body = '{"key": "%s", "outputs": {"f": {"file": "%s"}, "d": {"tree": {"s/x": "%s"}}}}'
    path = store._key_path(KEY)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body % (KEY, digest, digest))
    assert store.restore(KEY, tmp_path / "b") is not None
    assert (tmp_path / "b" / "f").read_text() == (tmp_path / "b" / "d" / "s" / "x").read_text()


def test_a_fifo_in_an_output_is_refused_when_storing(tmp_path):
    store = CheckpointStore(tmp_path / "store")
    (tmp_path / "a" / "d").mkdir(parents=True)
    os.mkfifo(tmp_path / "a" / "d" / "pipe")
    with pytest.raises(_materialise.UnstorableOutputError, match="pipe"):
        store.record(KEY, {"d": "d"}, tmp_path / "a")
    assert store.lookup(KEY) is None


# ---- failures half-way: nothing placed, nothing left ------------------------------------------


@pytest.fixture
def recorded(tmp_path):
    store = CheckpointStore(tmp_path / "store")
    a = tmp_path / "a"
    (a / "dir" / "sub").mkdir(parents=True)
    (a / "dir" / "sub" / "x").write_text("x\n")
    (a / "one.txt").write_text("one\n")
    (a / "two.txt").write_text("two\n")
    store.record(KEY, {n: n for n in ["dir", "one.txt", "two.txt"]}, a)
    b = tmp_path / "b"
    (b / "dir").mkdir(parents=True)
    (b / "dir" / "old").write_text("old\n")
    (b / "one.txt").write_text("old one\n")
    return store, b


def test_corrupt_object_half_way_places_nothing_and_leaves_nothing(recorded):
    store, b = recorded
    before = listing(b)
    digest = store.lookup(KEY).outputs["two.txt"]["file"]
    obj = store.object_path(digest)
    os.chmod(obj, 0o644)
    obj.write_text("tampered\n")
    with pytest.raises(CorruptObjectError):
        store.restore(KEY, b)
    assert listing(b) == before and not leftovers(b)


def test_failure_while_placing_leaves_no_stage_and_no_set_aside_output(recorded, monkeypatch):
    store, b = recorded
    real_rename, calls = os.rename, []

    def failing_rename(src, dst):
        calls.append(dst)
        if len(calls) == 2:  # the directory was set aside; putting the new one in fails
            raise OSError(28, "No space left on device")
        return real_rename(src, dst)

    monkeypatch.setattr(_materialise.os, "rename", failing_rename)
    with pytest.raises(OSError, match="No space"):
        store.restore(KEY, b)
    monkeypatch.undo()
    assert (b / "dir" / "old").read_text() == "old\n"  # the old output was put back
    assert not leftovers(b)
    assert store.restore(KEY, b) is not None and (b / "dir" / "sub" / "x").read_text() == "x\n"
    assert not (b / "dir" / "old").exists() and not leftovers(b)


def test_leftover_of_a_killed_restore_is_removed_by_the_next(recorded):
    store, b = recorded
    stale = b / ".one.txt.ckpt-deadbeef"
    stale.write_text("half\n")
    stale_dir = b / ".dir.ckpt-old-0badf00d"
    (stale_dir / "sub").mkdir(parents=True)
    os.chmod(stale_dir / "sub", 0o555)
    assert store.restore(KEY, b) is not None
    assert not leftovers(b)


@pytest.mark.parametrize(
    "entry",
    [
        {"tree": {"../../escaped": "DIGEST"}},
        {"tree": {}, "links": {"/abs": "x"}},
        {"tree": {}, "dirs": ["a/../../b"]},
    ],
)
def test_entry_names_leading_outside_are_refused_before_anything_is_made(tmp_path, entry):
    store = CheckpointStore(tmp_path / "store")
    (tmp_path / "src").write_text("x")
    digest = store.put_file(tmp_path / "src")
    entry = {k: ({r: digest for r in v} if k == "tree" else v) for k, v in entry.items()}
    with pytest.raises(_materialise.UnsafeEntryError):
        _materialise.build(entry, tmp_path / "stage", store.copy_out)
    assert not (tmp_path / "stage").exists() and not (tmp_path.parent / "escaped").exists()


def test_modes_never_reach_through_a_link(tmp_path):
    """A mode named under a link (a crafted manifest) is not applied: nothing outside the
    output changes."""
    store = CheckpointStore(tmp_path / "store")
    outside = tmp_path / "outside.txt"
    outside.write_text("x")
    os.chmod(outside, 0o600)
    entry = {"tree": {}, "links": {"alias": str(outside)}, "modes": {"alias": 0o777}}
    _materialise.build(entry, tmp_path / "stage", store.copy_out)
    assert stat.S_IMODE(outside.stat().st_mode) == 0o600


def test_every_kind_restores_through_a_signed_manifest_and_the_declared_names(tmp_path):
    """The merge of issue 13's halves: entries with modes, empty subdirectories and links pass
    the strict record parser (``_records.check_entry``), are signed, and restore through
    :meth:`CheckpointStore.restore` with the job's declared names; set-ID bits are not kept."""
    src = tmp_path / "src"
    (src / "tree" / "empty").mkdir(parents=True)
    (src / "tree" / "sub").mkdir()
    (src / "tree" / "sub" / "f").write_text("f\n")
    os.chmod(src / "tree" / "sub" / "f", 0o750)
    os.symlink("sub/f", src / "tree" / "alias")
    os.chmod(src / "tree" / "sub", 0o2755)  # set-group-ID, as on a shared group folder
    (src / "data.txt").write_text("data\n")
    os.symlink("data.txt", src / "latest")
    key = b"k" * 40
    store = CheckpointStore(tmp_path / "store", signing_key=key)
    names = {"tree": "tree", "latest": "latest", "data.txt": "data.txt"}
    store.record(KEY, names, src)
    reader = CheckpointStore(tmp_path / "store", signing_key=key)
    dest = tmp_path / "dest"
    dest.mkdir()
    manifest = reader.restore(KEY, dest, allowed=set(names), required=set(names))
    assert manifest is not None and not reader.problems
    assert listing(dest / "latest") == ("link", "data.txt")
    assert (dest / "tree" / "empty").is_dir() and os.readlink(dest / "tree" / "alias") == "sub/f"
    assert stat.S_IMODE((dest / "tree" / "sub" / "f").stat().st_mode) == 0o750
    assert stat.S_IMODE((dest / "tree" / "sub").stat().st_mode) == 0o755
    os.chmod(src / "tree" / "sub", 0o755)
    assert listing(dest / "tree") == listing(src / "tree")
    assert not [p for p in dest.rglob("*") if ".ckpt-" in p.name]
