"""Issue 27's pure parts: the read hook's instrumentation, the process-effect observation, local
modules keyed by content, checkpoints a fresh kernel could not load, numpy views."""

import ast
import builtins
import functools
import logging
import os
import pickle
import sys
import types
import warnings

import numpy as np
import pytest

from nbrewind._dataflow import (
    READ_HOOK,
    CellInstrumenter,
    ReadInstrumenter,
    SeenCode,
    analyse_cell,
)
from nbrewind._effects import EffectWatch, path_change, replay
from nbrewind._values import local_module_digest, module_file, rebind_all, serialize, with_views


def run_instrumented(source: str, namespace: dict) -> list[tuple[str, ...]]:
    """Run ``source`` as the kernel would compile it; the name sets reported, in order."""
    seen = SeenCode()
    reported: list[tuple[str, ...]] = []
    seen.on_first = reported.append
    old = getattr(builtins, READ_HOOK, None)
    setattr(builtins, READ_HOOK, seen.__getitem__)
    try:
        tree = ReadInstrumenter().visit(ast.parse(source))
        exec(compile(ast.fix_missing_locations(tree), "<cell>", "exec"), namespace)
    finally:
        if old is None:
            delattr(builtins, READ_HOOK)
        else:
            setattr(builtins, READ_HOOK, old)
    return reported


def test_functions_methods_lambdas_and_closures_report_their_globals_when_they_run():
    ns: dict = {"k": 2, "scale": 3, "unused": 0}
    source = (
        "f = lambda: k\n"
        "class C:\n    def get(self):\n        return scale\n"
        "def make():\n    def inner():\n        return k * scale\n    return inner\n"
        "def never():\n    return unused\n"
        "out = (f(), C().get(), make()())"
    )
    reported = run_instrumented(source, ns)
    assert ns["out"] == (2, 3, 6)
    names = set().union(*reported)
    assert {"k", "scale"} <= names
    assert ("unused",) not in reported, "code that did not run reports nothing"


def test_each_name_set_is_reported_once_per_cell_however_often_it_runs():
    ns: dict = {"k": 1}
    reported = run_instrumented("def f():\n    return k\ntotal = sum(f() for _ in range(1000))", ns)
    assert ns["total"] == 1000
    assert reported.count(("k",)) == 1


def test_docstrings_line_numbers_nonlocal_and_global_are_kept():
    ns: dict = {}
    source = (
        'def f():\n    "doc"\n    return g\n'
        "def outer():\n    x = 0\n    def inner():\n        nonlocal x\n        x = g\n"
        "    inner()\n    return x\n"
        "def setter():\n    global h\n    h = g + 1\n"
        "g = 5\nres = (f(), outer(), setter(), h)"
    )
    run_instrumented(source, ns)
    assert ns["f"].__doc__ == "doc"
    assert ns["res"] == (5, 5, None, 6)
    tree = ReadInstrumenter().visit(ast.parse("def f():\n    return g\n"))
    assert tree.body[0].body[0].lineno == 2, "the hook call takes the first statement's line"


def test_a_cell_that_cannot_be_instrumented_runs_as_written_and_says_so(monkeypatch):
    instrumenter = CellInstrumenter()

    def broken(self, node):
        raise RuntimeError("boom")

    monkeypatch.setattr(ReadInstrumenter, "visit", broken)
    tree = ast.parse("x = 1")
    assert instrumenter.visit(tree) is tree
    assert "could not be instrumented" in instrumenter.failed


def test_class_bodies_read_their_globals_at_definition_and_dir_is_opaque():
    assert "Q" in analyse_cell("class C:\n    z = Q\n").reads
    assert analyse_cell("print(dir())").opaque
    assert analyse_cell("x = 1\n").opaque is False


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        (["a", "b"], ["a", "b", "lib"], {"prepend": [], "append": ["lib"], "remove": []}),
        (["a", "b"], ["lib", "a", "b"], {"prepend": ["lib"], "append": [], "remove": []}),
        (["a", "b"], ["a"], {"prepend": [], "append": [], "remove": ["b"]}),
        (["a", "b"], ["a", "x", "b"], None),
        (["a", "b"], ["b", "a"], None),
    ],
)
def test_sys_path_changes_are_replayable_only_at_the_ends(before, after, expected):
    assert path_change(before, after) == expected


def test_environment_cwd_and_path_are_replayed_other_effects_are_named(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delenv("NBR_UNIT_MODE", raising=False)
    watch = EffectWatch(str(tmp_path))
    watch.start()
    os.environ["NBR_UNIT_MODE"] = "fast"
    os.chdir("sub")
    sys.path.append(str(tmp_path / "lib"))
    effects = watch.stop()
    assert effects.replay == {
        "environ": {"NBR_UNIT_MODE": "fast"},
        "cwd": "sub",
        "sys.path": {"prepend": [], "append": [str(tmp_path / "lib")], "remove": []},
    }
    assert not [o for o in effects.other if "environ" in o or "cwd" in o or "path" in o]
    # replayed into a process that had none of it
    os.chdir(tmp_path)
    del os.environ["NBR_UNIT_MODE"]
    sys.path.remove(str(tmp_path / "lib"))
    replay(effects.replay, str(tmp_path))
    assert os.environ["NBR_UNIT_MODE"] == "fast"
    assert os.getcwd() == str(tmp_path / "sub")
    assert sys.path[-1] == str(tmp_path / "lib")
    os.chdir(tmp_path)
    del os.environ["NBR_UNIT_MODE"]


def test_warning_filters_are_replayed_and_logging_is_another_effect(tmp_path):
    watch = EffectWatch(str(tmp_path))
    logger = logging.getLogger("nbrewind-unit")
    with warnings.catch_warnings():
        watch.start()
        warnings.simplefilter("ignore")
        logger.setLevel(logging.DEBUG)
        effects = watch.stop()
        replayed = effects.replay["warnings filters"]
        assert replayed["prepend"] == [["ignore", None, "builtins:Warning", None, 0]]
        assert replayed["append"] == replayed["remove"] == []
    logger.setLevel(logging.NOTSET)
    assert any("logging" in o for o in effects.other)
    with warnings.catch_warnings():
        before = list(warnings.filters)
        replay({"warnings filters": replayed}, str(tmp_path))
        assert warnings.filters[0][0] == "ignore" and warnings.filters[0][2] is Warning
        assert list(warnings.filters[1:]) == before


def test_a_local_module_is_keyed_by_its_source_and_state(tmp_path, monkeypatch):
    (tmp_path / "unit_helper_mod.py").write_text("X = 1\n\ndef get():\n    return X\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import unit_helper_mod

    try:
        assert module_file(unit_helper_mod) == str((tmp_path / "unit_helper_mod.py").resolve())
        first = local_module_digest(unit_helper_mod)
        unit_helper_mod.X = 2
        assert local_module_digest(unit_helper_mod) != first
        unit_helper_mod.X = 1
        assert local_module_digest(unit_helper_mod) == first
        (tmp_path / "unit_helper_mod.py").write_text("X = 1\n\ndef get():\n    return -X\n")
        assert local_module_digest(unit_helper_mod) != first
        assert module_file(np) is None and module_file(os) is None, "installed: by name"
    finally:
        sys.modules.pop("unit_helper_mod", None)


def test_a_value_pickled_by_reference_to_the_notebook_is_unpicklable(monkeypatch):
    main = types.ModuleType("__main__")
    monkeypatch.setitem(sys.modules, "__main__", main)

    @functools.lru_cache
    def square(x):
        return x * x

    square.__module__ = "__main__"
    square.__qualname__ = "square"
    main.square = square
    assert b"__main__" in pickle.dumps(square)
    s = serialize(square, "cell:1")
    assert s.kind == "unpicklable" and "__main__.square" in s.error
    assert serialize({"plain": [1, 2]}, "cell:2").kind == "pickle"


def test_numpy_views_are_restored_as_views_of_their_array():
    table = np.arange(12.0).reshape(4, 3)
    values = with_views({"table": table, "X": table[:, :-1], "y": table[:, -1]})
    assert values is not None
    back = rebind_all(pickle.loads(pickle.dumps(values)), {})
    assert sorted(back) == ["X", "table", "y"]
    back["y"][:] = 7
    assert (back["table"][:, -1] == 7).all()
    assert np.shares_memory(back["X"], back["table"])
    a = np.zeros(4)
    plain = {"a": a, "b": np.ones(2)}
    assert with_views(plain) is plain
    fortran = np.asfortranarray(np.zeros((3, 3)))  # owner not C-contiguous: not rebuilt
    assert with_views({"f": fortran, "col": fortran[:, 0]}) is None


def notebook(source: str) -> dict:
    """A namespace like a kernel's: a ``__main__`` module's globals."""
    ns = types.ModuleType("__main__").__dict__
    exec(source, ns)
    return ns


def groups_of(ns: dict) -> dict:
    from nbrewind._observe import alias_groups, reachable

    return alias_groups({k: reachable(v) for k, v in ns.items() if not k.startswith("__")})


def test_sharing_through_functions_instances_and_registries_forms_one_group():
    ns = notebook(
        "data = []\n"
        "def add(x, acc=data):\n    acc.append(x)\n"
        "REGISTRY = {}\n"
        "def reg(f):\n    REGISTRY[f.__name__] = f\n    return f\n"
        "@reg\ndef b():\n    return 1\n"
        "class Thing:\n    pass\n"
        "t = Thing()\n"
        "box = [1]\n"
        "push = box.append\n"
        "other = [2]\n"
    )
    groups = groups_of(ns)
    assert groups["data"] == {"data", "add"}
    assert {"REGISTRY", "b"} <= groups["b"]
    assert {"Thing", "t"} <= groups["t"]
    assert groups["box"] == {"box", "push"}
    assert groups["other"] == {"other"}


def test_functions_anywhere_in_a_value_load_bound_to_the_live_namespace():
    ns = notebook("ops = {'up': lambda v: v + scale}\n")
    s = serialize(ns["ops"], "cell")
    assert s.kind == "cloudpickle"
    live = {"scale": 5, "__name__": "__main__"}
    ops = rebind_all(
        {"ops": __import__("nbrewind._values", fromlist=["load"]).load(s.kind, s.blob, live)},
        live,
    )["ops"]
    assert ops["up"](1) == 6
    live["scale"] = 10
    assert ops["up"](1) == 11, "reads the live global, not a copy taken when pickled"


def test_dataclasses_and_namedtuples_of_the_notebook_restore_whole():
    from nbrewind._values import load

    ns = notebook(
        "import dataclasses, collections\n"
        "@dataclasses.dataclass\nclass Cfg:\n    lr: float = 0.5\n"
        "Point = collections.namedtuple('Point', 'x y')\n"
    )
    for value, text in ((ns["Cfg"](), "Cfg(lr=0.5)"), (ns["Point"](1, 2), "Point(x=1, y=2)")):
        s = serialize(value, "cell")
        back = load(s.kind, s.blob, {"__name__": "__main__"})
        assert repr(back) == text


def test_a_function_attribute_is_part_of_its_hash():
    ns = notebook("def f():\n    return 1\n")
    before = serialize(ns["f"], "c").hash
    ns["f"].calls = 2
    assert serialize(ns["f"], "c").hash != before


def test_stat_calls_and_appends_are_reads(tmp_path, monkeypatch):
    from nbrewind._observe import FileWatch

    monkeypatch.chdir(tmp_path)
    (tmp_path / "log.txt").write_text("one\n")
    (tmp_path / "data").mkdir()
    watch = FileWatch()
    watch.start(cwd=str(tmp_path))
    try:
        name = "abs" + "ent.csv"  # computed: no literal names it
        exists = os.path.exists(os.path.join("data", name))
        size = os.path.getsize("log.txt")
        with open("log.txt", "a") as f:
            f.write("two\n")
    finally:
        observed = watch.stop()
    from nbrewind._observe import _REAL_LSTAT, _REAL_STAT

    assert os.stat is _REAL_STAT and os.lstat is _REAL_LSTAT, "unwrapped after the cell"
    assert exists is False and size == 4
    assert observed is not None
    assert observed.stats_read == {os.path.join("data", "absent.csv"): None}
    assert "log.txt" in observed.files_read and "log.txt" in observed.files_written
    assert observed.files_read["log.txt"].startswith("sha256:")


def test_history_and_namespace_doors_are_seen():
    assert analyse_cell("print(_ + 1)").history
    assert analyse_cell("print(len(In), Out[2])").history
    assert not analyse_cell("_tmp = 1\nprint(_tmp)").history
    assert analyse_cell("import __main__\nprint(__main__.x)").opaque
    assert analyse_cell("import sys\nprint(sys.modules['__main__'].x)").opaque
    assert analyse_cell("get_ipython().user_ns['x'] = 1").opaque
    assert not analyse_cell("!echo $HOME").opaque, "IPython's own shell call is not a door"
    tree = ReadInstrumenter().visit(ast.parse("def f():\n    import __main__\n    return 1\n"))
    hook = tree.body[0].body[0].value
    assert "globals" in hook.args[0].value, "a function that reaches the namespace is wide"


def test_matplotlib_figures_are_not_checkpointed():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    try:
        for value in (fig, ax, [ax]):
            s = serialize(value, "cell")
            assert s.kind == "unpicklable" and "matplotlib" in s.error
    finally:
        plt.close(fig)


def test_lambda_defaults_are_read_when_the_lambda_is_defined():
    assert "K" in analyse_cell("f = lambda v, k=K: v * k").reads
    assert "K" not in analyse_cell("f = lambda v, K=1: v * K").reads


def test_a_class_body_reads_a_global_it_then_assigns():
    source = "import enum\nclass Level(enum.Enum):\n    LOW = LOW\n    HIGH = 100"
    assert "LOW" in analyse_cell(source).reads


def test_a_value_of_a_local_modules_class_hashes_with_that_modules_source(tmp_path, monkeypatch):
    (tmp_path / "unit_model_mod.py").write_text("class Model:\n    k = 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import unit_model_mod

    try:
        before = serialize(unit_model_mod.Model(), "c").hash
        (tmp_path / "unit_model_mod.py").write_text("class Model:\n    k = 3  # edited\n")
        assert serialize(unit_model_mod.Model(), "c").hash != before
    finally:
        sys.modules.pop("unit_model_mod", None)


def test_environment_reads_are_observed(tmp_path, monkeypatch):
    from nbrewind._observe import FileWatch, environment_reads_now

    monkeypatch.setenv("NBR_UNIT_READ", "x")
    watch = FileWatch()
    watch.start(cwd=str(tmp_path))
    try:
        seen = (os.environ.get("NBR_UNIT_READ"), "NBR_UNIT_ABSENT" in os.environ)
    finally:
        observed = watch.stop()
    assert seen == ("x", False)
    assert observed.env_read == {"NBR_UNIT_READ": "x", "NBR_UNIT_ABSENT": None}
    assert environment_reads_now(observed.env_read, {"NBR_UNIT_READ": "x"}) == ""
    assert "NBR_UNIT_READ" in environment_reads_now(observed.env_read, {"NBR_UNIT_READ": "y"})
    assert os.environ.get("NBR_UNIT_READ") == "x" and type(os.environ).__getitem__.__name__ == (
        "__getitem__"
    ), "unwrapped after the cell"


def test_pyplot_figures_a_cell_opens_are_replayed_under_their_numbers(tmp_path):
    """Issue 27: a figure left open (non-inline backend) is process state a later cell's
    plt.savefig or plt.gcf() finds; opening, closing and activating figures replay, the same
    figure pickles to the same bytes (matplotlib's own pickling advances an id counter), and
    drawing into a figure that was open before the cell makes it re-execute."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from nbrewind._effects import figure_bytes, replay_figures

    plt.close("all")
    try:
        watch = EffectWatch(str(tmp_path))
        watch.start()
        fig, ax = plt.subplots()
        ax.plot([1, 3, 2])
        plt.figure(5)
        plt.plot([0, 1])
        plt.figure(fig.number)
        effects = watch.stop()
        assert not [o for o in effects.other if "figure" in o], effects.other
        assert [n for n, _ in effects.figures] == [1, 5]
        assert effects.figure_changes == {"closed": [], "active": 1}
        assert figure_bytes(fig) == figure_bytes(fig)
        blobs = effects.figures

        watch.start()
        fig.axes[0].set_title("drawn later")
        drawn = watch.stop()
        assert any("draws into matplotlib figure 1" in o for o in drawn.other), drawn.other

        plt.close("all")
        replay_figures(dict(effects.figure_changes), blobs)
        assert plt.get_fignums() == [1, 5] and plt.gcf().number == 1
        assert [len(a.lines) for a in plt.figure(5).axes] == [1]
        assert list(plt.figure(1).axes[0].lines[0].get_ydata()) == [1, 3, 2]

        watch.start()
        plt.close(5)
        closed = watch.stop()
        assert closed.figures == [] and closed.figure_changes["closed"] == [5]
    finally:
        plt.close("all")


def test_a_local_modules_class_attributes_and_cache_are_its_state(tmp_path, monkeypatch):
    """Red team 27d: a class's list mutated in place, a class attribute rebound and an
    lru_cache filled are changes of the module's state; a relative ``__file__`` (torch's
    ``_classes``) is no file of the notebook."""
    (tmp_path / "unit_state_mod.py").write_text(
        "import functools\n\nclass Registry:\n    items = []\n    scale = 1\n\n"
        "    def count(self):\n        return len(self.items)\n\n"
        "@functools.lru_cache\ndef load(key):\n    return key * 2\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import unit_state_mod as mod

    try:
        first = local_module_digest(mod)
        mod.Registry.items.append("a")
        second = local_module_digest(mod)
        assert second != first
        mod.Registry.scale = 5
        third = local_module_digest(mod)
        assert third != second
        mod.load(3)
        assert local_module_digest(mod) != third
        fake = types.ModuleType("torch_like._classes")
        fake.__file__ = "_classes.py"
        assert module_file(fake) is None
    finally:
        sys.modules.pop("unit_state_mod", None)


def test_library_class_patches_display_settings_and_module_warnings_are_effects(tmp_path):
    import IPython.core.getipython  # noqa: F401 - display_state reads it (None outside a shell)

    from nbrewind._effects import display_state, replay_module_warnings

    assert display_state() is None  # no shell here: nothing to compare
    lib = types.ModuleType("unit_fake_lib")
    exec(
        "import warnings\nclass Frame:\n    pass\n"
        "def old():\n    warnings.warn('legacy', UserWarning)\n    return 1\n",
        lib.__dict__,
    )
    sys.modules["unit_fake_lib"] = lib
    try:
        frame = lib.Frame()
        watch = EffectWatch(str(tmp_path))
        watch.start({"frame": frame})
        lib.Frame.total = lambda self: 2
        effects = watch.stop()
        assert any("sets unit_fake_lib.Frame.total" in o for o in effects.other), effects.other

        watch.start({})
        with warnings.catch_warnings():
            warnings.simplefilter("default")
            lib.old()
            effects = watch.stop()
        shown = effects.replay["warnings shown in modules"]["unit_fake_lib"]
        assert shown[0][:2] == ["legacy", "builtins:UserWarning"]
        lib.__dict__.pop("__warningregistry__")
        with warnings.catch_warnings(record=True) as caught:
            # as in a kernel: ImportWarning ignored (the replay's probe), UserWarning once
            warnings.simplefilter("ignore", ImportWarning)
            warnings.simplefilter("default", UserWarning)
            replay_module_warnings({"unit_fake_lib": shown})
            lib.old()
        assert caught == [], "replayed: shown once already"
    finally:
        sys.modules.pop("unit_fake_lib", None)
