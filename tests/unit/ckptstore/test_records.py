"""What a store's records may say, and what happens when one says something else: a malformed
or hostile record is set aside with one line and counts as absent; nothing is written
outside the names a job declares; signed stores restore only what their key signed."""

import json
import os
import string
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ckptstore import CheckpointStore, StoreError
from ckptstore.__main__ import main as cli
from ckptstore._records import (
    MalformedRecordError,
    SigningKeyError,
    load_signing_key,
    parse_manifest,
    refusal,
    unsafe_path_reason,
)
from ckptstore.explain import explain_outputs
from ckptstore.store import ReadOnlyStoreError, RefusedRecordError
from tests.conftest import examples

KEY = "d" * 64
DIGEST = "sha256:" + "0" * 64


@pytest.fixture
def store(tmp_path: Path) -> CheckpointStore:
    return CheckpointStore(tmp_path / "store")


@pytest.fixture
def recorded(store: CheckpointStore, tmp_path: Path) -> Path:
    """KEY recorded from a working directory with a file and a directory output."""
    wd = tmp_path / "site-a"
    (wd / "out" / "tree").mkdir(parents=True)
    (wd / "out" / "a.txt").write_text("a\n")
    (wd / "out" / "tree" / "b.txt").write_text("b\n")
    store.record(KEY, {"out/a.txt": "out/a.txt", "out/tree": "out/tree"}, wd)
    return wd


def write_manifest(store: CheckpointStore, body: object) -> None:
    path = store._key_path(KEY)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(body))


# ---- names ----------------------------------------------------------------------------------

SAFE = st.lists(
    st.text(alphabet=string.ascii_letters + string.digits + "_-.", min_size=1, max_size=8).filter(
        lambda part: part not in (".", "..")
    ),
    min_size=1,
    max_size=4,
).map("/".join)


@given(SAFE)
def test_safe_relative_names_stay_inside_any_directory(name):
    assert unsafe_path_reason(name) is None
    root = "/work/site"
    assert os.path.normpath(os.path.join(root, name)).startswith(root + "/")


@given(st.text(max_size=30))
def test_every_name_accepted_stays_inside_the_working_directory(name):
    """Generated names: whatever is accepted resolves (lexically) inside the directory."""
    if unsafe_path_reason(name) is None:
        root = "/work/site"
        assert os.path.normpath(os.path.join(root, name)).startswith(root + "/")
        assert os.path.normpath(name) == name


@pytest.mark.parametrize(
    "name", ["/etc/passwd", "../../x", "a/../../x", "a//b", "./a", "~/.bashrc", "a\\..\\b", ""]
)
def test_unsafe_names_are_refused(name):
    assert unsafe_path_reason(name) is not None


def test_every_entry_kind_written_is_accepted():
    entries = {
        "f": {"file": DIGEST, "mode": 0o755},
        "l": {"link": "../elsewhere/target"},
        "d": {
            "tree": {"a/b.txt": DIGEST},
            "links": {"a/c": "b.txt"},
            "dirs": ["a", "empty"],
            "modes": {".": 0o755, "a/b.txt": 0o644},
        },
    }
    record = parse_manifest(json.dumps({"key": KEY, "outputs": entries}), KEY)
    assert record.outputs == entries


def test_refusal_allows_only_declared_names_and_requires_the_outputs():
    assert refusal(["out/a.txt", "logs/a.log"], {"out/a.txt", "logs/a.log"}, {"out/a.txt"}) is None
    assert "not an output" in refusal(["out/b.txt"], {"out/a.txt"})
    assert "lacks the declared output" in refusal(
        ["logs/a.log"], {"out/a.txt", "logs/a.log"}, {"out/a.txt"}
    )
    assert "absolute" in refusal(["/abs/path"], {"/abs/path"})


# ---- manifests --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "body, why",
    [
        ({}, "key"),
        ([], "not a JSON object"),
        ({"key": KEY, "outputs": {}}, "missing or empty"),
        ({"key": KEY, "outputs": {"out/a.txt": {"file": "md5:abc"}}}, "not a sha256 digest"),
        ({"key": KEY, "outputs": {"/abs/path": {"file": DIGEST}}}, "absolute"),
        ({"key": KEY, "outputs": {"../../x": {"file": DIGEST}}}, "'..'"),
        ({"key": KEY, "outputs": {"d": {"tree": {"../../../../X": DIGEST}}}}, "'..'"),
        ({"key": KEY, "outputs": {"d": {"tree": {"a": DIGEST, "a/b": DIGEST}}}}, "inside"),
        ({"key": KEY, "outputs": {"d": {"file": DIGEST, "tree": {}}}}, "unexpected field"),
        ({"key": KEY, "outputs": {"d": {"file": DIGEST, "mode": 0o4755}}}, "permission bits"),
        ({"key": KEY, "outputs": {"d": {"link": ""}}}, "link target"),
        (
            {"key": KEY, "outputs": {"d": {"tree": {}, "links": {"l": "/etc"}, "dirs": ["l/x"]}}},
            "inside",
        ),
        ({"key": KEY, "outputs": {"d": {"tree": {"a": DIGEST}, "modes": {"../a": 0o644}}}}, "'..'"),
        ({"key": KEY, "outputs": {"d": {"tree": {}, "dirs": ["/x"]}}}, "absolute"),
        ({"key": KEY, "outputs": {"d": {"file": DIGEST}}, "meta": []}, "meta"),
        ({"key": "e" * 64, "outputs": {"d": {"file": DIGEST}}}, "file name"),
    ],
)
def test_malformed_manifests_are_rejected_with_the_reason(body, why):
    """Including the entry kinds of restored-as-it-was outputs (modes, links, dirs)."""
    with pytest.raises(MalformedRecordError, match=why.replace("(", r"\(")):
        parse_manifest(json.dumps(body), KEY)


@pytest.mark.parametrize(
    "body",
    [{}, {"key": KEY, "outputs": {"out/a.txt": {"file": "md5:abc"}}}, "not json at all"],
)
def test_a_malformed_manifest_is_set_aside_with_one_line_and_counts_as_absent(
    store, tmp_path, body
):
    path = store._key_path(KEY)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body if isinstance(body, str) else json.dumps(body))
    assert store.lookup(KEY) is None
    assert store.restore(KEY, tmp_path / "b") is None
    assert not path.exists() and list((store.root / "corrupt").iterdir())
    assert len(store.problems) == 1 and "\n" not in store.problems[0]
    assert "malformed" in store.problems[0] and "its job runs" in store.problems[0]


@pytest.mark.parametrize("planted", ["/abs/path", "../../x", "out/../../x"])
def test_a_manifest_naming_a_path_outside_is_never_written(store, recorded, tmp_path, planted):
    """The Why case: a writer to a shared store plants a name outside the workflow."""
    victim = tmp_path / "victim"
    manifest = json.loads(store._key_path(KEY).read_text())
    manifest["outputs"][str(victim) if planted == "/abs/path" else planted] = manifest["outputs"][
        "out/a.txt"
    ]
    store._key_path(KEY).write_text(json.dumps(manifest))
    site_b = tmp_path / "deep" / "er" / "site-b"
    site_b.mkdir(parents=True)
    assert store.restore(KEY, site_b, {"out/a.txt", "out/tree"}, {"out/a.txt"}) is None
    assert not victim.exists() and not (tmp_path / "deep" / "x").exists()
    assert not (site_b / "out").exists()


def test_a_tree_entry_climbing_out_is_never_written(store, recorded, tmp_path):
    manifest = json.loads(store._key_path(KEY).read_text())
    tree = manifest["outputs"]["out/tree"]["tree"]
    tree["../../../../X"] = tree["b.txt"]
    store._key_path(KEY).write_text(json.dumps(manifest))
    site_b = tmp_path / "a" / "b" / "site-b"
    site_b.mkdir(parents=True)
    assert store.restore(KEY, site_b, {"out/a.txt", "out/tree"}) is None
    assert not list(tmp_path.rglob("X")) and not (site_b / "out").exists()
    assert any("tree entry '../../../../X'" in p for p in store.problems)


def test_a_manifest_naming_an_undeclared_output_is_refused(store, recorded, tmp_path):
    site_b = tmp_path / "site-b"
    with pytest.raises(RefusedRecordError, match="not an output, log or benchmark"):
        store.restore(KEY, site_b, allowed={"out/a.txt"}, required={"out/a.txt"})
    with pytest.raises(RefusedRecordError, match="lacks the declared output 'out/c.txt'"):
        store.restore(KEY, site_b, {"out/a.txt", "out/tree", "out/c.txt"}, {"out/c.txt"})
    assert not site_b.exists()
    manifest = store.restore(KEY, site_b, {"out/a.txt", "out/tree", "log.txt"}, {"out/a.txt"})
    assert manifest is not None and (site_b / "out" / "tree" / "b.txt").read_text() == "b\n"


# ---- index entries, explain, gc on damaged records --------------------------------------------


def test_damaged_index_entries_and_manifests_do_not_stop_explain(store, recorded, capsys):
    store.remember(json.dumps(["r", ["out/a.txt"]]), KEY)
    store.remember(json.dumps(["s", ["out/s.txt"]]), "e" * 64)
    (store.root / "index" / "bad.json").write_text('{"identity": 3}')
    (store.root / "index" / "torn.json").write_text('{"ident')
    write_manifest(store, {})
    assert cli(["explain", str(store.root)]) == 0
    out = capsys.readouterr()
    assert "rule r (out/a.txt): stored once" in out.out
    assert out.err.count("warning:") == 2 and "malformed" in out.err
    assert not (store.root / "index" / "bad.json").exists()


def test_gc_sets_aside_damaged_records_and_finishes(store, recorded, tmp_path, capsys):
    with store.run("r1") as run:
        run.record("f" * 64, {"out/a.txt": "out/a.txt"}, recorded)
    write_manifest(store, {"key": KEY, "outputs": {"x": {"file": "md5:abc"}}})
    (store.root / "keys" / "zz").mkdir()
    (store.root / "keys" / "zz" / "NOT-HEX.json").write_text("{}")
    (store.root / "runs" / "bad.json").write_text('{"id": "bad", "finished": 1, "keys": [3]}')
    (store.root / "active" / "torn.json").write_text("{")
    assert cli(["gc", str(store.root), "--keep-runs", "1"]) == 0
    out = capsys.readouterr()
    assert "kept the keys of 1 run(s)" in out.out
    assert out.err.count("warning:") == 3, out.err
    assert store.lookup("f" * 64) is not None


@pytest.mark.parametrize("args", [["--keep-runs", "two"], ["--keep-runs"], ["--keep"]])
def test_gc_other_bad_arguments_are_one_line(store, capsys, args):
    with pytest.raises(SystemExit) as exit_:
        cli(["gc", str(store.root), *args])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error:"), err


@pytest.mark.parametrize("value", ["0", "-3"])
def test_gc_bad_keep_runs_is_one_line(store, capsys, value):
    assert cli(["gc", str(store.root), "--keep-runs", value]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--keep-runs must be at least 1" in err
    with pytest.raises(ValueError, match="at least 1"):
        store.gc(int(value))


def test_a_store_path_that_is_a_file_is_one_clear_error(tmp_path, capsys):
    path = tmp_path / "store"
    path.write_text("not a store")
    with pytest.raises(StoreError, match="is a file, not a checkpoint store directory"):
        CheckpointStore(path)
    assert cli(["gc", str(path)]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / "FORMAT").write_bytes(b"\xff\xfe garbage")
    with pytest.raises(StoreError, match="not a checkpoint store this version reads"):
        CheckpointStore(tmp_path / "odd")


# ---- signing ----------------------------------------------------------------------------------


@pytest.fixture
def key_file(tmp_path: Path) -> Path:
    path = tmp_path / "ckpt.key"
    path.write_text("k" * 64)
    path.chmod(0o600)
    return path


def test_a_signed_store_restores_only_what_its_key_signed(tmp_path, recorded, key_file):
    key = load_signing_key(key_file)
    signed = CheckpointStore(tmp_path / "store", signing_key=key)
    site_b = tmp_path / "site-b"
    # Written without the key (an untrusted writer): refused by a signing reader.
    with pytest.raises(RefusedRecordError, match="not signed"):
        signed.restore(KEY, site_b)
    signed.record(KEY, {"out/a.txt": "out/a.txt"}, recorded)
    assert signed.restore(KEY, site_b) is not None
    # Altered after signing (an output renamed to another declared output): refused.
    path = signed._key_path(KEY)
    body = json.loads(path.read_text())
    body["outputs"] = {"out/b.txt": body["outputs"]["out/a.txt"]}
    path.write_text(json.dumps(body))
    with pytest.raises(RefusedRecordError, match="does not match its content"):
        signed.restore(KEY, site_b)
    other = CheckpointStore(tmp_path / "store", signing_key=b"o" * 64)
    signed.record(KEY, {"out/a.txt": "out/a.txt"}, recorded)
    with pytest.raises(RefusedRecordError, match="another key"):
        other.lookup(KEY)


def test_a_signing_key_readable_by_others_or_short_is_refused(tmp_path, key_file):
    key_file.chmod(0o644)
    with pytest.raises(SigningKeyError, match="chmod 600"):
        load_signing_key(key_file)
    key_file.chmod(0o600)
    key_file.write_text("short")
    with pytest.raises(SigningKeyError, match="too short"):
        load_signing_key(key_file)
    with pytest.raises(SigningKeyError, match="cannot read"):
        load_signing_key(tmp_path / "absent")


def test_a_read_only_store_refuses_writes_by_name(store, recorded, monkeypatch):
    store.read_only = True
    with pytest.raises(ReadOnlyStoreError, match="read-only"):
        store.record("f" * 64, {"out/a.txt": "out/a.txt"}, recorded)
    with store.run("ro") as run:
        assert run.restore(KEY, recorded.parent / "site-b") is not None
    assert not list((store.root / "runs").iterdir())
    assert not list((store.root / "active").iterdir())


def test_explain_reads_unsigned_history_of_a_signed_store(tmp_path, recorded):
    """Explaining never restores: it needs no signature."""
    store = CheckpointStore(tmp_path / "store", signing_key=b"k" * 64)
    store.remember(json.dumps(["r", ["out/a.txt"]]), KEY)
    assert [e.rule for e in explain_outputs(store)] == ["r"]


# ---- generated records: whatever a store holds, reading it never aborts ------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)
names = st.sampled_from(["out/a.txt", "/abs", "../x", "a/../b", "", "a//b", "ok/tree", "~x"])
digests = st.sampled_from([DIGEST, "md5:abc", "sha256:" + "A" * 64, 3, None])
entries = st.one_of(
    st.fixed_dictionaries({"file": digests}),
    st.fixed_dictionaries({"tree": st.dictionaries(names, digests, max_size=3)}),
    json_values,
)
manifests = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"key": st.sampled_from([KEY, "x", None]), "outputs": st.dictionaries(names, entries)},
        optional={"meta": json_values, "sig": json_values},
    ),
)


@settings(max_examples=examples(150), deadline=None)
@given(manifests)
def test_any_manifest_text_parses_to_safe_names_or_is_malformed(body):
    """Generated manifests, hostile or damaged: parsing either yields only safe names and
    sha256 digests, or raises MalformedRecordError; never anything else."""
    try:
        record = parse_manifest(json.dumps(body), KEY)
    except MalformedRecordError:
        return
    for name, entry in record.outputs.items():
        assert unsafe_path_reason(name) is None
        if "file" in entry:
            assert entry["file"] == DIGEST
        else:
            assert all(unsafe_path_reason(r) is None for r in entry["tree"])
            assert set(entry["tree"].values()) <= {DIGEST}


@settings(max_examples=examples(60), deadline=None)
@given(manifests)
def test_a_store_holding_any_manifest_restores_it_or_runs_the_job(tmp_path_factory, body):
    """The same through the store: lookup, restore, gc and explain never raise on it."""
    root = tmp_path_factory.mktemp("gen")
    store = CheckpointStore(root / "store")
    write_manifest(store, body)
    site = root / "site"
    try:
        store.restore(KEY, site, {"out/a.txt"}, {"out/a.txt"})
    except RefusedRecordError:
        pass
    store.gc(keep_runs=1)
    list(explain_outputs(store))
    assert not (root / "abs").exists() and not (root / "x").exists()
    assert all("\n" not in p for p in store.problems)
