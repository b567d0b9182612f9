"""The content-addressed checkpoint store: atomic, verified, concurrent-safe, collectable."""

import os
import time
from pathlib import Path

import pytest

from ckptstore import CheckpointStore, CorruptObjectError, StoreError, file_digest
from ckptstore.__main__ import main as cli
from ckptstore.store import FORMAT

KEY_A, KEY_B, KEY_C = "a" * 64, "b" * 64, "c" * 64


@pytest.fixture
def store(tmp_path: Path) -> CheckpointStore:
    return CheckpointStore(tmp_path / "store")


@pytest.fixture
def site_a(tmp_path: Path) -> Path:
    """A working directory with a file output and a directory() output."""
    wd = tmp_path / "site-a"
    (wd / "results" / "tree" / "sub").mkdir(parents=True)
    (wd / "results" / "model.bin").write_bytes(os.urandom(3 * 1024 * 1024 + 7))
    (wd / "results" / "tree" / "x.txt").write_text("x\n")
    (wd / "results" / "tree" / "sub" / "y.txt").write_text("y\n")
    return wd


def test_identical_content_is_stored_once(store, tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    one.write_text("same")
    two.write_text("same")
    assert store.put_file(one) == store.put_file(two) == file_digest(one)
    assert len(list(store.root.glob("objects/*/*"))) == 1
    assert not list(store.root.glob("tmp/*"))  # nothing half-written left behind


def test_restore_at_another_site_is_byte_identical(store, site_a, tmp_path):
    outputs = {"results/model.bin": "results/model.bin", "results/tree": "results/tree"}
    store.record(KEY_A, outputs, site_a, meta={"rule": "train"})
    site_b = tmp_path / "elsewhere" / "site-b"
    site_b.mkdir(parents=True)
    manifest = store.restore(KEY_A, site_b)
    assert manifest is not None and manifest.meta == {"rule": "train"}
    for rel in ["results/model.bin", "results/tree/x.txt", "results/tree/sub/y.txt"]:
        assert (site_b / rel).read_bytes() == (site_a / rel).read_bytes()
    assert not list(site_b.rglob(".*ckpt-*"))  # no staging leftovers


def test_unknown_key_restores_nothing(store, tmp_path):
    assert store.lookup(KEY_B) is None
    assert store.restore(KEY_B, tmp_path) is None


def test_truncated_object_is_detected_and_never_restored(store, site_a, tmp_path):
    store.record(KEY_A, {"results/model.bin": "results/model.bin"}, site_a)
    digest = file_digest(site_a / "results" / "model.bin")
    obj = store.object_path(digest)
    os.chmod(obj, 0o644)
    with open(obj, "r+b") as f:
        f.truncate(1000)
    site_b = tmp_path / "site-b"
    (site_b / "results").mkdir(parents=True)
    (site_b / "results" / "model.bin").write_text("previous content")
    with pytest.raises(CorruptObjectError, match=digest):
        store.restore(KEY_A, site_b)
    # Nothing was placed: the previous file is untouched, no staging file is left.
    assert (site_b / "results" / "model.bin").read_text() == "previous content"
    assert [p.name for p in (site_b / "results").iterdir()] == ["model.bin"]
    # The bad object was set aside; the key now restores nothing, so the job reruns.
    assert not obj.exists() and list(store.root.glob("corrupt/*"))
    assert store.restore(KEY_A, site_b) is None


def test_tampered_object_of_a_directory_output_is_detected(store, site_a, tmp_path):
    store.record(KEY_A, {"results/tree": "results/tree"}, site_a)
    obj = store.object_path(file_digest(site_a / "results" / "tree" / "x.txt"))
    os.chmod(obj, 0o644)
    obj.write_text("evil\n")
    with pytest.raises(CorruptObjectError):
        store.restore(KEY_A, tmp_path / "site-b")
    assert not (tmp_path / "site-b" / "results" / "tree").exists()


def test_damaged_manifest_counts_as_missing(store, site_a):
    store.record(KEY_A, {"results/model.bin": "results/model.bin"}, site_a)
    store._key_path(KEY_A).write_text("{not json")
    assert store.lookup(KEY_A) is None


def test_not_a_store_is_a_clear_error(tmp_path):
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "data.csv").write_text("x")
    with pytest.raises(StoreError, match=r"not empty \(it holds 'data.csv'\) and not a checkpoint"):
        CheckpointStore(busy)
    with pytest.raises(StoreError, match="missing does not exist; name an existing checkpoint"):
        CheckpointStore(tmp_path / "missing", create=False)
    (tmp_path / "empty").mkdir()
    with pytest.raises(StoreError, match="no FORMAT file"):
        CheckpointStore(tmp_path / "empty", create=False)


def test_a_store_being_created_by_another_process_is_completed_not_refused(tmp_path):
    """Two runs starting at once on a new store: the second may find the first's directories
    but no FORMAT yet. Only the store's own layout there: it is a store in creation."""
    half = tmp_path / "half"
    for sub in ("objects", "keys", "tmp"):
        (half / sub).mkdir(parents=True)
    store = CheckpointStore(half)
    assert (half / "FORMAT").read_text().strip() == FORMAT
    assert all((half / sub).is_dir() for sub in ("objects", "keys", "runs", "active", "tmp"))
    assert store.has("sha256:" + "0" * 64) is False


def test_keys_must_be_hex():
    with pytest.raises(ValueError, match="lowercase hex"):
        CheckpointStore.__new__(CheckpointStore)._key_path("../../etc/passwd")


def _age(store: CheckpointStore, seconds: float) -> None:
    """Pretend everything now in the store was written ``seconds`` ago."""
    past = time.time() - seconds
    for path in store.root.rglob("*"):
        if path.is_file():
            os.utime(path, (past, past))


def test_gc_keeps_the_latest_runs_and_drops_the_rest(store, tmp_path):
    wd = tmp_path / "wd"
    wd.mkdir()
    for n, key in enumerate([KEY_A, KEY_B, KEY_C]):
        (wd / f"{n}.txt").write_text(f"output {n}")
        with store.run(f"run{n}") as run:
            run.record(key, {f"{n}.txt": f"{n}.txt"}, wd)
        _age(store, 1000 - n)  # run0 oldest
        time.sleep(0.01)
    report = store.gc(keep_runs=2)
    assert report.deleted_keys == 1 and report.deleted_objects == 1
    assert store.lookup(KEY_A) is None
    assert store.restore(KEY_B, tmp_path / "b") is not None
    assert store.restore(KEY_C, tmp_path / "c") is not None


def test_gc_skips_a_damaged_run_record_instead_of_failing(store, tmp_path):
    wd = tmp_path / "wd"
    wd.mkdir()
    (wd / "x.txt").write_text("x")
    with store.run("good") as run:
        run.record(KEY_A, {"x.txt": "x.txt"}, wd)
    (store.root / "runs" / "torn.json").write_text('{"id": "torn", "fini')
    report = store.gc(keep_runs=1)
    assert report.kept_runs == 1
    assert store.restore(KEY_A, tmp_path / "a") is not None


def test_gc_never_deletes_what_an_active_run_needs(store, tmp_path):
    wd = tmp_path / "wd"
    wd.mkdir()
    (wd / "old.txt").write_text("old")
    with store.run("old-run") as run:
        run.record(KEY_A, {"old.txt": "old.txt"}, wd)
    _age(store, 5000)
    with store.run("newer-run") as run:
        run.lookup(KEY_B)
    with store.run("running") as active:
        # The running workflow stores the same content again (deduplicated) mid-run.
        active.store.put_file(wd / "old.txt")
        store.gc(keep_runs=1)
        assert store.has(file_digest(wd / "old.txt"))


def test_cli_verify_finds_and_sets_aside_corruption(store, site_a, capsys):
    store.record(KEY_A, {"results/tree": "results/tree"}, site_a)
    assert cli(["verify", str(store.root)]) == 0
    obj = store.object_path(file_digest(site_a / "results" / "tree" / "x.txt"))
    os.chmod(obj, 0o644)
    obj.write_text("changed")
    assert cli(["verify", str(store.root)]) == 1
    assert "corrupt: sha256:" in capsys.readouterr().out
    assert not obj.exists()


def test_cli_refuses_a_directory_that_is_not_a_store(tmp_path, capsys):
    assert cli(["gc", str(tmp_path / "nothing")]) == 2
    assert "nothing does not exist; name an existing checkpoint store" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert cli(["gc", str(tmp_path / "empty")]) == 2
    assert "not a checkpoint store" in capsys.readouterr().err


def test_gc_clears_stale_leftovers_of_dead_writers_only(store):
    stale = store.root / "tmp" / "stage-1-dead"
    stale.mkdir()
    (stale / "0").write_text("half")
    fresh = store.root / "tmp" / "123-live"
    fresh.write_text("being written")
    old = time.time() - 2 * 24 * 3600
    os.utime(stale, (old, old))
    store.gc(keep_runs=1)
    assert not stale.exists() and fresh.exists()


def test_runs_that_restore_and_store_nothing_do_not_count_toward_keep_runs(store, tmp_path):
    """The Why case: a "Nothing to be done" rerun or a plan recorded a run with 0 keys, and
    gc --keep-runs 1 then deleted every key and object."""
    wd = tmp_path / "wd"
    wd.mkdir()
    (wd / "x.txt").write_text("x")
    with store.run("stored") as run:
        run.record(KEY_A, {"x.txt": "x.txt"}, wd)
    _age(store, 5000)
    for n in range(3):
        with store.run(f"nothing-{n}") as run:
            run.lookup(KEY_B)  # looked up, not found: not a use
    report = store.gc(keep_runs=1)
    assert report.kept_runs == 1 and report.deleted_keys == 0 and report.deleted_objects == 0
    assert store.restore(KEY_A, tmp_path / "b") is not None
    assert [p.stem for p in (store.root / "runs").iterdir()] == ["stored"]


def test_keys_a_run_says_its_outputs_rest_on_are_kept_like_used_ones(store, tmp_path):
    """Issue 26: a "Nothing to be done" run names the keys its outputs rest on (and only
    well-formed keys count); gc --keep-runs 1 then keeps them."""
    wd = tmp_path / "wd"
    wd.mkdir()
    (wd / "x.txt").write_text("x")
    (wd / "y.txt").write_text("y")
    with store.run("stored") as run:
        run.record(KEY_A, {"x.txt": "x.txt"}, wd)
    with store.run("changed") as run:
        run.record(KEY_B, {"y.txt": "y.txt"}, wd)
    _age(store, 5000)
    with store.run("nothing") as run:
        run.rests_on([KEY_A, KEY_B, "../not-a-key"])
    report = store.gc(keep_runs=1)
    assert report.deleted_keys == 0, report
    assert store.restore(KEY_A, tmp_path / "b") is not None


def test_gc_during_a_run_keeps_what_that_run_restored(store, tmp_path):
    """The Why case: gc --keep-runs 1 during a run deleted what the run restored at its
    start (the key and objects were old, and the run had not finished)."""
    wd = tmp_path / "wd"
    wd.mkdir()
    (wd / "old.txt").write_text("old")
    (wd / "new.txt").write_text("new")
    with store.run("old-run") as run:
        run.record(KEY_A, {"old.txt": "old.txt"}, wd)
    _age(store, 5000)
    with store.run("newer-run") as run:
        run.record(KEY_B, {"new.txt": "new.txt"}, wd)
    with store.run("running") as active:
        assert active.restore(KEY_A, tmp_path / "site-b") is not None
        report = store.gc(keep_runs=1)
        assert report.deleted_keys == 0 and report.deleted_objects == 0
        assert store.restore(KEY_A, tmp_path / "site-c") is not None
    # Once that run is over it is the latest: what it restored is still kept.
    store.gc(keep_runs=1)
    assert store.lookup(KEY_A) is not None and store.lookup(KEY_B) is None


def test_gc_keeps_what_a_running_workflow_restored_even_if_it_could_not_touch_it(store, tmp_path):
    """Another user's run cannot refresh the times of objects it does not own: the keys it
    restored, published in its active marker, keep them."""
    wd = tmp_path / "wd"
    wd.mkdir()
    (wd / "old.txt").write_text("old")
    (wd / "new.txt").write_text("new")
    with store.run("old-run") as run:
        run.record(KEY_A, {"old.txt": "old.txt"}, wd)
    with store.run("newer-run") as run:
        run.record(KEY_B, {"new.txt": "new.txt"}, wd)
    with store.run("running") as active:
        assert active.restore(KEY_A, tmp_path / "site-b") is not None
        active.publish()
        _age(store, 5000)  # as if the restore had not refreshed anything
        assert store.gc(keep_runs=1).deleted_keys == 0
        assert store.restore(KEY_A, tmp_path / "site-c") is not None


def test_pinned_objects_survive_gc_and_a_new_pin_replaces_the_old(store, tmp_path):
    """Issue 26: `python -m ckptstore gc .nbrewind` deleted every notebook checkpoint (NBRewind
    wrote objects and recorded no runs or names). A pin keeps its objects."""
    old = store.put_bytes(b"old checkpoint")
    new = store.put_bytes(b"new checkpoint")
    loose = store.put_bytes(b"nobody's")
    store.pin("/work/nb/out.ipynb", [old, new, "not a digest"])
    _age(store, 5000)
    report = store.gc(keep_runs=1)
    assert store.has(old) and store.has(new) and not store.has(loose)
    assert report.deleted_objects == 1
    store.pin("/work/nb/out.ipynb", [new])  # the notebook ran again
    store.gc(keep_runs=1)
    assert store.has(new) and not store.has(old)
    assert [owner for owner, _ in store.pins()] == ["/work/nb/out.ipynb"]
    assert store.unpin("/work/nb/out.ipynb") and not store.unpin("/work/nb/out.ipynb")


def test_a_damaged_pin_makes_gc_delete_no_object(store):
    kept = store.put_bytes(b"pinned by the damaged pin")
    store.pin("nb.ipynb", [kept])
    pin_file = next(store.root.glob("pins/*/*.json"))
    pin_file.write_text("{")
    _age(store, 5000)
    report = store.gc(keep_runs=1)
    assert store.has(kept) and report.deleted_objects == 0
    assert any("pin" in p for p in report.problems)
