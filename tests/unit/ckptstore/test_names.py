"""Names bound to content (what the ``ckpt`` storage plugin stores), and gc around them."""

import json
import os
import time
from pathlib import Path

import pytest

from ckptstore import CheckpointStore, file_digest

KEY_A = "a" * 64


@pytest.fixture
def store(tmp_path: Path) -> CheckpointStore:
    return CheckpointStore(tmp_path / "store")


def _file(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / "wd" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _age(store: CheckpointStore, seconds: float) -> None:
    past = time.time() - seconds
    for path in store.root.rglob("*"):
        if path.is_file():
            os.utime(path, (past, past))


def test_bind_resolve_unbind(store, tmp_path):
    path = _file(tmp_path, "a.txt", "hello")
    record = store.bind_name("results/a.txt", path)
    assert record.entry == {"file": file_digest(path)} and record.size == 5
    assert store.resolve_name("results/a.txt") == record
    assert store.resolve_name("results/b.txt") is None
    assert store.unbind_name("results/a.txt") is True
    assert store.unbind_name("results/a.txt") is False
    assert store.resolve_name("results/a.txt") is None
    assert store.has(file_digest(path))  # objects stay until gc
    assert not list(store.root.glob("active/*")) and not list(store.root.glob("tmp/*"))


def test_names_lists_records_by_prefix(store, tmp_path):
    for name in ["results/x/1.txt", "results/y/2.txt", "other/3.txt"]:
        store.bind_name(name, _file(tmp_path, name, name))
    assert sorted(r.name for r in store.names("results/")) == ["results/x/1.txt", "results/y/2.txt"]
    assert len(list(store.names())) == 3


def test_a_damaged_name_record_counts_as_absent_and_is_set_aside(store, tmp_path):
    store.bind_name("a.txt", _file(tmp_path, "a.txt", "a"))
    record_file = next(store.root.glob("names/*/*.json"))
    record_file.write_text('{"name": "a.txt", "entr')
    assert store.resolve_name("a.txt") is None
    assert not record_file.exists() and list(store.root.glob("corrupt/*"))


def test_a_name_record_bound_to_a_link_entry_is_malformed(store, tmp_path):
    """Manifest entries may be links (outputs restored as links); a name is bound to stored
    content only, so such a name record is set aside, not a crash later (KeyError)."""
    store.bind_name("a.txt", _file(tmp_path, "a.txt", "a"))
    record_file = next(store.root.glob("names/*/*.json"))
    data = json.loads(record_file.read_text())
    record_file.write_text(json.dumps({**data, "entry": {"link": "/etc/passwd"}}))
    assert store.resolve_name("a.txt") is None
    assert not record_file.exists() and list(store.root.glob("corrupt/*"))


def test_gc_keeps_objects_of_bound_names_and_frees_unbound_ones(store, tmp_path):
    kept = _file(tmp_path, "kept.txt", "bound content")
    dropped = _file(tmp_path, "dropped.txt", "unbound content")
    tree = tmp_path / "wd" / "tree"
    tree.mkdir()
    (tree / "t.txt").write_text("in a tree")
    store.bind_name("kept.txt", kept)
    store.bind_name("dropped.txt", dropped)
    store.bind_name("tree", tree)
    store.unbind_name("dropped.txt")
    # A finished run that used none of these, long after they were written.
    with store.run("later"):
        pass
    _age(store, 5000)
    runs = store.root / "runs" / "later.json"
    runs.write_text(json.dumps({"id": "later", "finished": time.time() - 10, "keys": []}))
    report = store.gc(keep_runs=1)
    assert report.deleted_objects == 1
    assert store.has(file_digest(kept)) and store.has(file_digest(tree / "t.txt"))
    assert not store.has(file_digest(dropped))
    assert store.resolve_name("kept.txt") is not None


def test_gc_without_any_run_frees_only_what_nothing_refers_to(store, tmp_path):
    """A store used only as Snakemake storage has no runs: gc still frees unbound content."""
    one = _file(tmp_path, "one.txt", "one")
    two = _file(tmp_path, "two.txt", "two")
    keyed = _file(tmp_path, "keyed.txt", "keyed")
    store.bind_name("one.txt", one)
    store.bind_name("two.txt", two)
    store.record(KEY_A, {"keyed.txt": "keyed.txt"}, tmp_path / "wd")
    store.unbind_name("two.txt")
    _age(store, 10)
    report = store.gc(keep_runs=3)
    assert report.deleted_objects == 1 and report.deleted_keys == 0
    assert store.has(file_digest(one)) and store.has(file_digest(keyed))
    assert not store.has(file_digest(two))


def test_gc_spares_content_an_active_writer_has_not_bound_yet(store, tmp_path):
    loose = _file(tmp_path, "loose.txt", "written, not yet bound")
    with store._writing():  # what bind_name holds between put_file and the record
        digest = store.put_file(loose)
        time.sleep(0.05)  # gc starts strictly after the object was written
        store.gc(keep_runs=1)
        assert store.has(digest)
    # Control: once no writer is active, the same unbound object is garbage.
    time.sleep(0.05)
    store.gc(keep_runs=1)
    assert not store.has(digest)
