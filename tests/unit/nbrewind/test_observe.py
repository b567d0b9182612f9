"""Run-time observation: alias groups, RNG states, the file audit hook (no processes)."""

import os
import random
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbrewind._observe import (
    RNG_NUMPY,
    RNG_RANDOM,
    FileWatch,
    alias_groups,
    live_threads,
    reachable,
    record_path,
    rng_blob,
    rng_state,
    set_rng_state,
)
from nbrewind._record import input_files
from nbrewind._values import load, member_hash, serialize
from tests.conftest import examples


def groups_of(ns):
    return alias_groups({n: reachable(v) for n, v in ns.items()})


def test_aliases_and_nested_containers_are_one_group():
    cfg = {"model": {"depth": 1}, "k": 1}
    ns = {"cfg": cfg, "alias": cfg, "p": cfg["model"], "other": {"k": 1}, "n": 5, "s": "x"}
    groups = groups_of(ns)
    assert groups["cfg"] == groups["alias"] == groups["p"] == {"cfg", "alias", "p"}
    assert groups["other"] == {"other"} and groups["n"] == {"n"} and groups["s"] == {"s"}


def test_functions_modules_and_immutables_do_not_join_groups():
    def f():
        return None

    shared = 10**20
    ns = {"f": f, "g": f, "os": os, "a": (shared, "t"), "b": (shared, "t")}
    assert all(len(g) == 1 for g in groups_of(ns).values())


@settings(max_examples=examples(200), deadline=None)
@given(st.lists(st.integers(0, 4), min_size=1, max_size=8), st.data())
def test_groups_are_exactly_the_names_sharing_an_object(owners, data):
    """Generated: names bound to containers built over a few shared leaves."""
    leaves = [[i] for i in range(5)]
    ns = {}
    for i, owner in enumerate(owners):
        extra = data.draw(st.lists(st.integers(0, 4), max_size=2))
        ns[f"v{i}"] = {"own": leaves[owner], "more": [leaves[e] for e in extra]}
    groups = groups_of(ns)
    used = {n: {id(leaves[o]) for o in _leaf_ids(ns[n], leaves)} for n in ns}
    for a in ns:
        for b in ns:
            if used[a] & used[b]:
                assert groups[a] == groups[b]
    for name, group in groups.items():
        assert name in group


def _leaf_ids(value, leaves):
    found = [i for i, leaf in enumerate(leaves) if value["own"] is leaf]
    found += [i for i, leaf in enumerate(leaves) for m in value["more"] if m is leaf]
    return found


def test_a_group_is_checkpointed_as_one_object_graph():
    cfg = {"k": 1}
    s = serialize({"alias": cfg, "cfg": cfg}, "test")
    values = load(s.kind, s.blob, {})
    assert values["alias"] is values["cfg"]
    assert member_hash(s.hash, "cfg") != member_hash(s.hash, "alias")


def test_rng_states_round_trip_without_importing_numpy_by_unpickling():
    random.seed(3)
    blob = rng_blob(rng_state(RNG_RANDOM))
    expected = [random.random() for _ in range(3)]
    set_rng_state(RNG_RANDOM, blob)
    assert [random.random() for _ in range(3)] == expected
    np = pytest.importorskip("numpy")
    np.random.seed(5)
    blob = rng_blob(rng_state(RNG_NUMPY))
    assert b"numpy" not in blob, "the state must unpickle without numpy"
    expected = np.random.rand(3).tolist()
    set_rng_state(RNG_NUMPY, blob)
    assert np.random.rand(3).tolist() == expected


def test_file_watch_sees_computed_paths_listings_and_deletions(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "in.txt").write_text("x")
    watch = FileWatch()
    observed = watch.start()
    try:
        name = "in" + ".txt"
        with open(os.path.join("d", name)) as f:
            f.read()
        sorted(Path("d").glob("*.txt"))
        list(Path("missing").glob("*"))
        Path("d", "out.txt").write_text("y")
        Path("d", "in.txt").unlink()
    finally:
        watch.stop()
    assert set(observed.files_read) == {os.path.join("d", "in.txt")}
    assert observed.files_read[os.path.join("d", "in.txt")].startswith("sha256:")
    assert {"d", "missing"} <= set(observed.dirs_read) and observed.dirs_read["missing"] is None
    assert observed.files_written == {os.path.join("d", "out.txt"), os.path.join("d", "in.txt")}
    assert not observed.processes
    watch.start()
    with open(tmp_path / "d" / "out.txt") as f:  # inactive after stop: nothing recorded before
        f.read()
    assert watch.stop().files_read == {"d/out.txt": observed_digest(tmp_path / "d" / "out.txt")}


def observed_digest(path):
    import hashlib

    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def test_record_paths_are_relative_inside_the_working_directory(tmp_path):
    assert record_path(str(tmp_path / "a" / "b.txt"), str(tmp_path)) == os.path.join("a", "b.txt")
    assert record_path("/elsewhere/x", str(tmp_path)) == "/elsewhere/x"


def test_input_files_are_those_read_before_any_cell_wrote_them():
    records = [
        {"files_read": {"data.csv": "sha256:1"}, "files_written": {"out.csv": "sha256:2"}},
        {"files_read": {"out.csv": "sha256:2", "other.csv": "sha256:3"}},
        None,
    ]
    assert input_files(records) == {"data.csv": "sha256:1", "other.csv": "sha256:3"}


def test_ipythons_history_writer_is_not_a_thread_the_cell_left_running():
    """IPython 9 starts its history-saving thread lazily, in whichever cell first saves
    history: that cell must not be called unknowable (and re-executed on every repeat) for
    it. Any other thread a cell leaves running still counts."""
    HistorySavingThread = type("HistorySavingThread", (threading.Thread,), {})
    HistorySavingThread.__module__ = "IPython.core.history"
    stop = threading.Event()
    before = live_threads()
    history = HistorySavingThread(target=stop.wait, daemon=True)
    user = threading.Thread(target=stop.wait, daemon=True)
    history.start()
    user.start()
    try:
        assert live_threads() - before == {user.ident}
    finally:
        stop.set()
        history.join()
        user.join()
