"""Checkpoint serialisation: kinds, stable hashes, restore into a namespace."""

import threading
import types

import numpy as np

from nbrewind._values import load, serialize


def test_plain_data_is_pickled_and_hashed_by_its_bytes():
    s = serialize({"a": [1, 2], "arr": np.arange(5)}, "cell")
    assert s.kind == "pickle"
    restored = load(s.kind, s.blob, {})
    assert restored["a"] == [1, 2] and (restored["arr"] == np.arange(5)).all()
    assert serialize({"a": [1, 2], "arr": np.arange(5)}, "other").hash == s.hash


def test_modules_are_checkpointed_by_name():
    s = serialize(np, "cell")
    assert s.kind == "module" and load(s.kind, s.blob, {}) is np


def test_unpicklable_values_get_their_producers_identity_as_hash():
    lock = threading.Lock()
    a, b = serialize(lock, "cell-1:lock"), serialize(lock, "cell-2:lock")
    assert a.kind == "unpicklable" and a.blob is None and "lock" in a.error.lower()
    assert a.hash != b.hash
    assert serialize((i for i in range(3)), "g").kind == "unpicklable"


def test_notebook_functions_restore_bound_to_the_live_namespace():
    source = types.ModuleType("__main__").__dict__
    exec("def scale(x):\n    return x * factor\n", source)
    s = serialize(source["scale"], "c")
    assert s.kind == "cloudpickle"
    target = {"factor": 10}
    f = load(s.kind, s.blob, target)
    assert f(2) == 20
    target["factor"] = 3
    assert f(2) == 6


def test_notebook_classes_and_instances_restore():
    ns = types.ModuleType("__main__").__dict__
    exec("class Model:\n    def predict(self, x):\n        return x + bias\n", ns)
    s = serialize(ns["Model"](), "c")
    assert s.kind == "cloudpickle"
    obj = load(s.kind, s.blob, {"bias": 1})
    assert obj.predict(1) == 2


def test_changing_a_function_changes_its_hash():
    a, b = {"__name__": "__main__"}, {"__name__": "__main__"}
    exec("def f(x):\n    return x + 1\n", a)
    exec("def f(x):\n    return x + 2\n", b)
    assert serialize(a["f"], "c").hash != serialize(b["f"], "c").hash


def test_a_loaded_module_whose_globals_hold_a_non_string_name_does_not_break_serialisation(
    tmp_path, monkeypatch
):
    # Snakemake runs a Snakefile in snakemake.workflow's own globals, so after an in-process
    # Snakemake run that module's __name__ can be anything (seen: None in the full test run).
    odd = types.ModuleType("odd_name_mod")
    odd.__file__ = str(tmp_path / "odd_name_mod.py")
    odd.__name__ = None
    monkeypatch.setitem(__import__("sys").modules, "odd_name_mod", odd)
    s = serialize({"a": [1, 2]}, "cell")
    assert s.kind == "pickle" and load(s.kind, s.blob, {}) == {"a": [1, 2]}
