"""Explaining reruns: component diffs and the per-job key history the store keeps."""

import json

from ckptstore import CheckpointStore, explain_change, explain_outputs


def test_explain_change_names_each_changed_new_and_gone_component():
    old = {"rule": "r", "params:alpha": "1", "input:data/x.csv": "a", "config:k": "c"}
    new = {"rule": "r", "params:alpha": "2", "input:data/x.csv": "a", "wildcards:s": "w"}
    assert explain_change(old, new) == [
        "config:k is gone",
        "params:alpha changed",
        "wildcards:s is new",
    ]
    assert explain_change(old, dict(old)) == []


def test_history_keeps_newest_first_without_repeats_and_is_bounded(tmp_path):
    store = CheckpointStore(tmp_path / "store")
    for key in ["a1", "b2", "a1", *[f"{i:02x}" for i in range(20)]]:
        store.remember("job", key)
    history = store.history("job")
    assert history[0] == "13" and store.recall("job") == "13"
    assert len(history) == CheckpointStore.HISTORY
    assert len(set(history)) == len(history)
    assert store.history("unknown") == [] and store.recall("unknown") is None


def test_explain_outputs_compares_the_last_two_keys_of_a_job(tmp_path):
    store = CheckpointStore(tmp_path / "store")
    work = tmp_path / "work"
    (work / "out").mkdir(parents=True)
    (work / "out" / "a.txt").write_text("1")
    identity = json.dumps(["train", ["out/a.txt"]])
    for key, alpha in [("aa", "1"), ("bb", "2")]:
        comps = {"rule": "train", "params:alpha": alpha, "script:train.py": "s"}
        store.record(key, {"out/a.txt": "out/a.txt"}, work, meta={"components": comps})
        store.remember(identity, key)
    other = json.dumps(["report", ["report.md"]])
    store.remember(other, "cc")

    [found] = list(explain_outputs(store, ["out/a.txt"]))
    assert found.rule == "train" and found.reasons == ["params:alpha changed"]
    assert found.render() == "rule train (out/a.txt): reran (aa -> bb): params:alpha changed"
    rendered = {e.rule: e.render() for e in explain_outputs(store)}
    assert rendered["report"] == "rule report (report.md): stored once (cc); it has not rerun since"
