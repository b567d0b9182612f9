"""Storing, retrieving, corruption, directories, removal and glob of ``ckpt://`` objects."""

import asyncio
import logging
import os
from pathlib import Path

import pytest
from snakemake.io import IOCache
from snakemake_interface_common.exceptions import WorkflowError

from ckptstore import CheckpointStore, file_digest
from snakemake_storage_plugin_ckpt import StorageProvider, StorageProviderSettings


def make_provider(root: Path, local: Path) -> StorageProvider:
    return StorageProvider(
        local_prefix=local,
        logger=logging.getLogger("test"),
        settings=StorageProviderSettings(root=root),
    )


@pytest.fixture
def provider(tmp_path: Path) -> StorageProvider:
    return make_provider(tmp_path / "store", tmp_path / "site-a")


@pytest.fixture
def elsewhere(tmp_path: Path) -> StorageProvider:
    """The same store seen from another working directory (another site)."""
    return make_provider(tmp_path / "store", tmp_path / "site-b")


def stored_file(provider: StorageProvider, query: str, content: bytes):
    obj = provider.object(query)
    obj.local_path().parent.mkdir(parents=True, exist_ok=True)
    obj.local_path().write_bytes(content)
    obj.store_object()
    return obj


def test_a_stored_file_is_retrieved_byte_identical_elsewhere(provider, elsewhere):
    content = os.urandom(2 * 1024 * 1024 + 3)
    obj = stored_file(provider, "ckpt://results/model.bin", content)
    assert obj.local_path() == provider.local_prefix / "results" / "model.bin"
    there = elsewhere.object("ckpt://results/model.bin")
    assert there.exists() and there.size() == len(content)
    assert there.checksum() == file_digest(obj.local_path())
    there.retrieve_object()
    assert there.local_path().read_bytes() == content
    # The local copy carries the store time, so Snakemake does not fetch it again.
    assert there.local_path().stat().st_mtime == pytest.approx(there.mtime(), abs=1e-3)
    assert not list(there.local_path().parent.glob(".*ckpt-*"))  # no staging leftovers


def test_mtime_is_the_store_time_not_the_local_file_time(provider):
    obj = provider.object("ckpt://a.txt")
    obj.local_path().write_text("a")
    os.utime(obj.local_path(), (1000.0, 1000.0))
    obj.store_object()
    assert obj.mtime() > 1_000_000_000


def test_same_content_under_two_names_is_stored_once(provider):
    stored_file(provider, "ckpt://one.txt", b"same")
    stored_file(provider, "ckpt://sub/two.txt", b"same")
    store = provider.store
    assert len(list(store.root.glob("objects/*/*"))) == 1
    assert len(list(store.root.glob("names/*/*.json"))) == 2


def test_a_tampered_object_is_reported_set_aside_and_never_placed(provider, elsewhere):
    obj = stored_file(provider, "ckpt://results/model.bin", b"the real model" * 1000)
    digest = obj.checksum()
    target = provider.store.object_path(digest)
    os.chmod(target, 0o644)
    target.write_bytes(b"the real model" * 999 + b"tampered bytes")
    there = elsewhere.object("ckpt://results/model.bin")
    with pytest.raises(WorkflowError) as err:
        there.retrieve_object()
    message = str(err.value)
    assert "ckpt://results/model.bin" in message and digest in message
    assert "corrupt" in message
    # Nothing placed: no local file, no staging file; the object is in corrupt/.
    assert not there.local_path().exists()
    assert not list(there.local_path().parent.glob(".*"))
    assert not target.exists() and list(provider.store.root.glob("corrupt/*"))
    # The name now counts as missing, so Snakemake reruns the job that makes it.
    assert not there.exists()


def test_a_corrupt_object_leaves_an_older_local_copy_untouched(provider, elsewhere):
    obj = stored_file(provider, "ckpt://a.txt", b"new content")
    there = elsewhere.object("ckpt://a.txt")
    there.local_path().parent.mkdir(parents=True, exist_ok=True)
    there.local_path().write_text("previous content")
    target = provider.store.object_path(obj.checksum())
    os.chmod(target, 0o644)
    with open(target, "r+b") as f:
        f.truncate(3)
    with pytest.raises(WorkflowError, match="corrupt"):
        there.retrieve_object()
    assert there.local_path().read_text() == "previous content"


def test_a_directory_is_stored_as_a_tree_and_replaces_the_local_one(provider, elsewhere):
    obj = provider.object("ckpt://results/parts")
    tree = obj.local_path()
    (tree / "sub").mkdir(parents=True)
    (tree / "x.txt").write_text("x\n")
    (tree / "sub" / "y.txt").write_text("yy\n")
    obj.store_object()
    there = elsewhere.object("ckpt://results/parts")
    assert there.exists() and there.size() == 0 and there.local_footprint() == 5
    assert there.checksum() is None  # a tree has no single digest
    (there.local_path() / "stale").mkdir(parents=True)  # an older local copy
    there.retrieve_object()
    found = sorted(str(p.relative_to(there.local_path())) for p in there.local_path().rglob("*"))
    assert found == ["sub", "sub/y.txt", "x.txt"]
    assert (there.local_path() / "sub" / "y.txt").read_text() == "yy\n"


def test_a_tampered_object_in_a_tree_places_nothing(provider, elsewhere):
    obj = provider.object("ckpt://parts")
    (obj.local_path()).mkdir(parents=True)
    (obj.local_path() / "a").write_text("a")
    (obj.local_path() / "b").write_text("b")
    obj.store_object()
    target = provider.store.object_path(file_digest(obj.local_path() / "b"))
    os.chmod(target, 0o644)
    target.write_text("B")
    there = elsewhere.object("ckpt://parts")
    with pytest.raises(WorkflowError, match="ckpt://parts"):
        there.retrieve_object()
    assert not there.local_path().exists()


def test_a_missing_object_is_a_clear_error_and_the_name_counts_as_absent(provider, elsewhere):
    digest = stored_file(provider, "ckpt://a.txt", b"a").checksum()
    provider.store.object_path(digest).unlink()
    there = elsewhere.object("ckpt://a.txt")
    assert not there.exists()
    with pytest.raises(WorkflowError, match=f"ckpt://a.txt: its stored object {digest} is miss"):
        there.retrieve_object()
    assert not there.local_path().exists()


def test_storing_again_rebinds_the_name(provider, elsewhere):
    stored_file(provider, "ckpt://a.txt", b"first")
    first_time = provider.object("ckpt://a.txt").mtime()
    stored_file(provider, "ckpt://a.txt", b"second")
    there = elsewhere.object("ckpt://a.txt")
    there.retrieve_object()
    assert there.local_path().read_bytes() == b"second"
    assert there.mtime() >= first_time


def test_remove_drops_the_name_and_gc_then_frees_the_object(provider):
    obj = stored_file(provider, "ckpt://a.txt", b"only here")
    stored_file(provider, "ckpt://b.txt", b"kept")
    obj.remove()
    assert not obj.exists()
    with pytest.raises(WorkflowError, match="not in the ckpt store"):
        obj.mtime()
    report = provider.store.gc(keep_runs=1)
    assert report.deleted_objects == 1
    assert not provider.store.has(file_digest(obj.local_path()))
    assert provider.object("ckpt://b.txt").exists()


def test_touch_gives_a_new_store_time_and_missing_names_cannot_be_touched(provider):
    obj = stored_file(provider, "ckpt://a.txt", b"a")
    before = obj.mtime()
    obj.touch()
    assert obj.mtime() >= before
    with pytest.raises(WorkflowError, match="not in the ckpt store"):
        provider.object("ckpt://nothing.txt").touch()


def test_inventory_fills_the_cache_from_the_record(provider):
    obj = stored_file(provider, "ckpt://results/a.txt", b"abc")
    missing = provider.object("ckpt://results/missing.txt")
    cache = IOCache(max_wait_time=10)
    asyncio.run(obj.inventory(cache))
    asyncio.run(missing.inventory(cache))
    key = obj.cache_key()
    assert cache.exists_in_storage[key] is True
    assert cache.mtime[key].storage() == obj.mtime()
    assert cache.size[key] == 3
    assert cache.exists_in_storage[missing.cache_key()] is False
    assert obj.get_inventory_parent() == "ckpt://results"
    assert provider.object("ckpt://top.txt").get_inventory_parent() is None


def test_glob_candidates_come_from_name_records_by_prefix(provider):
    for name in ["results/s1/counts.txt", "results/s2/counts.txt", "other/s3/counts.txt"]:
        stored_file(provider, f"ckpt://{name}", name.encode())
    obj = provider.object("ckpt://results/{sample}/counts.txt")
    assert list(obj.list_candidate_matches()) == [
        "ckpt://results/s1/counts.txt",
        "ckpt://results/s2/counts.txt",
    ]


def test_an_invalid_query_never_maps_outside_the_local_prefix(provider):
    obj = provider.object("ckpt:///etc/passwd")
    with pytest.raises(WorkflowError, match="not a valid ckpt query: the path is absolute"):
        obj.local_path()
    with pytest.raises(WorkflowError, match="'..'"):
        provider.object("ckpt://../outside.txt").retrieve_object()


def test_storing_a_missing_local_file_is_a_clear_error(provider):
    with pytest.raises(WorkflowError, match="cannot store ckpt://nope.txt: .* does not exist"):
        provider.object("ckpt://nope.txt").store_object()


def test_a_missing_root_setting_names_the_flag_and_the_variable(tmp_path):
    with pytest.raises(WorkflowError, match="--storage-ckpt-root.*SNAKEMAKE_STORAGE_CKPT_ROOT"):
        StorageProvider(
            local_prefix=tmp_path / "local",
            logger=logging.getLogger("test"),
            settings=StorageProviderSettings(),
        )


def test_a_root_that_is_not_a_store_is_a_clear_error(tmp_path):
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "data.csv").write_text("x")
    with pytest.raises(WorkflowError, match="cannot use .*busy as the ckpt store"):
        make_provider(busy, tmp_path / "local")


def test_the_store_is_the_one_the_executor_checkpoints_use(provider, tmp_path):
    """Objects are shared with ``--sticky-checkpoints``: same layout, same deduplication."""
    obj = stored_file(provider, "ckpt://results/a.txt", b"shared")
    same = CheckpointStore(tmp_path / "store", create=False)
    wd = tmp_path / "wd"
    wd.mkdir()
    (wd / "a.txt").write_bytes(b"shared")
    manifest = same.record("ab" * 32, {"a.txt": "a.txt"}, wd)
    assert manifest.outputs["a.txt"]["file"] == obj.checksum()
    assert len(list(same.root.glob("objects/*/*"))) == 1


@pytest.mark.parametrize(
    "entry",
    [
        {"file": "md5:abc"},
        {"tree": {"../../../../X": "sha256:" + "0" * 64}},
        {"tree": {"/abs": "sha256:" + "0" * 64}},
        ["not", "an", "entry"],
    ],
)
def test_a_malformed_name_record_counts_as_absent_and_is_set_aside(
    provider, tmp_path, entry, caplog
):
    """The Why case: one bad record made every rerun fail (an ExceptionGroup), and a tree
    entry could name a path outside the local prefix."""
    import json

    obj = stored_file(provider, "ckpt://d/a.txt", b"a")
    path = provider.store._name_path("d/a.txt")
    record = json.loads(path.read_text())
    record["entry"] = entry
    path.write_text(json.dumps(record))
    assert not obj.exists()
    assert not path.exists() and list((provider.store.root / "corrupt").iterdir())
    warned = [r.getMessage() for r in caplog.records if "malformed" in r.getMessage()]
    assert len(warned) == 1 and "\n" not in warned[0], warned
    with pytest.raises(WorkflowError, match="is not in the ckpt store"):
        obj.retrieve_object()
    assert not list(tmp_path.rglob("X"))
    stored_file(provider, "ckpt://d/a.txt", b"again")  # the rerun binds it anew
    assert obj.exists()
