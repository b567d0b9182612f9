"""Issue 28 part 4 and 5 on hand-built logs and pure code: config keys as they are read, a
config file mapped to the keys that changed, Snakemake's process cut per job context."""

import copy
import json
import pickle

from distea import Change, analyse
from distea._config import (
    ConfigRecorder,
    changed_keys,
    flatten,
    reaches,
    record_in_place,
    recording_copy,
)


def _recorder():
    reads: list[str] = []
    config = recording_copy(
        {"model": {"alpha": 0.5, "layers": [1, 2]}, "shards": {"size": 12}, "name": "x"},
        reads.append,
    )
    return config, reads


def test_each_protocol_names_the_key_path_it_reveals():
    config, reads = _recorder()
    assert config["model"]["alpha"] == 0.5
    assert reads == ["model.alpha"]  # the mapping on the way reveals nothing by itself
    reads.clear()
    assert config.get("missing", 3) == 3 and "size" in config["shards"]
    assert reads == ["missing", "shards.size"]  # an absent key is a read too
    reads.clear()
    json.dumps(config["model"])
    assert reads == ["model.*"]  # a C encoder on a dict subclass calls items()
    reads.clear()
    dict(config["shards"]), {**config["shards"]}, list(config), len(config)
    assert {"shards.*", "*"} <= set(reads)


def test_a_recorder_pickles_and_copies_as_plain_data():
    config, reads = _recorder()
    loaded = pickle.loads(pickle.dumps(config))
    assert type(loaded) is dict and type(loaded["model"]) is dict
    assert loaded == {
        "model": {"alpha": 0.5, "layers": [1, 2]},
        "shards": {"size": 12},
        "name": "x",
    }
    deep = copy.deepcopy(config)
    assert type(deep) is dict and reads == ["*"]  # a deep copy reveals everything


def test_mappings_put_in_later_are_recorded_too():
    reads: list[str] = []
    config = recording_copy({"a": 1}, reads.append)
    dict.__setitem__(config, "sub", {"k": 2})  # as Snakemake's update_config does
    record_in_place(config, reads.append)
    assert isinstance(config["sub"], ConfigRecorder) and config["sub"]["k"] == 2
    assert reads == ["sub.k"]


def test_a_change_reaches_reads_of_the_key_its_mappings_and_its_leaves():
    assert reaches("model.alpha", "model.alpha")
    assert reaches("model.alpha", "model.*") and reaches("model.alpha", "*")
    assert reaches("model", "model.alpha")  # the whole subtree changed
    assert not reaches("model.alpha", "model.beta")
    assert not reaches("model.alpha", "shards.*")
    assert not reaches("model.alphabet", "model.alpha")


def test_a_config_file_maps_to_the_keys_whose_values_changed():
    before = flatten({"model": {"alpha": 0.5, "min": 2}, "shards": {"size": 12}})
    after = flatten({"model": {"alpha": 0.5, "min": 3}, "shards": {"size": 12}, "new": 1})
    assert changed_keys(before, after) == ["model.min", "new"]


def _job(rule, out, inputs=()):
    return {
        "rule": rule,
        "wildcards": {},
        "input": [[p, "h"] for p in inputs],
        "output": [[out, "h"]],
    }


def test_only_the_jobs_whose_code_read_a_key_are_impacted(logs):
    logs.logger([_job("a", "a.txt"), _job("b", "b.txt"), _job("c", "c.txt", ["a.txt"])])
    fn = logs.fn
    cfg = {"k": "cfg", "n": "model.alpha", "c": 2, "job": "a[a.txt]"}
    logs.process("pa", [fn("lib.f", 1, 1), cfg, fn("lib.g", 3, 4), {"k": "end", "c": 5}],
                 job="a[a.txt]")  # fmt: skip
    whole = {"k": "cfg", "n": "shards.*", "c": 2, "job": "b[b.txt]"}
    logs.process("pb", [fn("lib.f", 1, 1), whole, {"k": "end", "c": 3}], job="b[b.txt]")
    logs.process("pc", [fn("lib.h", 1, 1), {"k": "end", "c": 2}], job="c[c.txt]")
    result = analyse(logs.root, [Change.parse("config:model.alpha")])
    assert {j.name for j in result.jobs} == {"a[a.txt]", "c[c.txt]"}
    assert ("lib.g", "a[a.txt]") in result.names("function")
    assert ("lib.f", "a[a.txt]") not in result.names("function")  # before the read
    other = analyse(logs.root, [Change.parse("config:shards.size")])
    assert {j.name for j in other.jobs} == {"b[b.txt]"}


def _dag(logs, state_notes):
    """Snakemake's process computed the params of jobs a and b (a helper ran in each)."""
    logs.logger([_job("a", "a.txt"), _job("b", "b.txt")])
    fn = logs.fn
    records = [
        fn("Snakefile.<module>", 1, 2),
        {"k": "ctx", "job": "a[a.txt]", "c": [3, 6], "f": 6},
        fn("helpers.clip_for", 4, 5),
        {"k": "ctx", "job": "b[b.txt]", "c": [7, 10], "f": 10},
        fn("helpers.other", 8, 9),
        {"k": "end", "c": 11},
    ]
    records[1:1] = [{"k": "state", "c": 2, "job": None, "w": None, "e": "top level"}]
    if state_notes:
        records.insert(4, {"k": "state", "c": 6, "job": "a[a.txt]", "w": state_notes, "e": "x"})
    logs.process("dag", records, role="dag")
    logs.process("pa", [fn("lib.a", 1, 1), {"k": "end", "c": 2}], job="a[a.txt]")
    logs.process("pb", [fn("lib.b", 1, 1), {"k": "end", "c": 2}], job="b[b.txt]")


def test_a_helper_that_left_snakemakes_state_unchanged_impacts_its_job_alone(logs):
    _dag(logs, False)
    result = analyse(logs.root, [Change.parse("func:helpers.clip_for")])
    assert {j.name for j in result.jobs} == {"a[a.txt]"}


def test_a_helper_that_changed_snakemakes_state_carries_to_later_jobs(logs):
    _dag(logs, True)
    result = analyse(logs.root, [Change.parse("func:helpers.clip_for")])
    assert {j.name for j in result.jobs} == {"a[a.txt]", "b[b.txt]"}


def test_the_snakefiles_top_level_reaches_every_job(logs):
    _dag(logs, False)
    result = analyse(logs.root, [Change.parse("func:Snakefile")])
    assert {j.name for j in result.jobs} == {"a[a.txt]", "b[b.txt]"}


def test_an_input_function_reaches_the_jobs_it_chose_as_producers(logs):
    """A sample sheet's selection in an input function decides which upstream jobs run: a
    change reaching it reaches them (they may be dropped, added or replaced)."""
    logs.logger([_job("prep", "p/s1.txt"), _job("prep", "p/s2.txt"), _job("other", "o.txt")]
                + [_job("group", "g.txt", ["p/s1.txt", "p/s2.txt"])])  # fmt: skip
    fn = logs.fn
    records = [
        {"k": "state", "c": 1, "job": None, "w": None, "e": "top level"},
        {"k": "ctx", "job": "group[g.txt]", "c": [2, 5], "f": 5, "w": "input"},
        fn("sheet.members", 3, 4),
        {"k": "state", "c": 5, "job": "group[g.txt]", "w": False, "e": "unchanged"},
        {"k": "ctx", "job": "other[o.txt]", "c": [6, 9], "f": 9},
        fn("sheet.other", 7, 8),
        {"k": "end", "c": 10},
    ]
    logs.process("dag", records, role="dag")
    for i, key in enumerate(["prep[p/s1.txt]", "prep[p/s2.txt]", "other[o.txt]", "group[g.txt]"]):
        logs.process(f"p{i}", [fn("lib.x", 1, 1), {"k": "end", "c": 2}], job=key)
    result = analyse(logs.root, [Change.parse("func:sheet.members")])
    assert {j.name for j in result.jobs} == {"group[g.txt]", "prep[p/s1.txt]", "prep[p/s2.txt]"}
    chain = next(j.chain for j in result.jobs if j.name == "prep[p/s1.txt]")
    assert any("input function of group[g.txt] chose prep[p/s1.txt]" in step for step in chain)
