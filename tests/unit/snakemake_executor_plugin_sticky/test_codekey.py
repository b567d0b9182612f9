"""Digests of code as it can run (issue 26): a ``run:`` block's key follows every function,
class, global, closure, default and workflow-local module it reaches, ignores line numbers
and file names, and refuses (names) what it cannot represent.

Workflow code is compiled the way Snakemake compiles a Snakefile: from source, with the
file's path as its name, into one namespace."""

import dis
import functools
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from snakemake_executor_plugin_sticky._codekey import (
    NAME_OPS,
    CodeFollower,
    Unfollowable,
    code_names,
)
from snakemake_executor_plugin_sticky._provenance import stable_repr


def snakefile(folder: Path, source: str, name: str = "Snakefile") -> dict:
    """Run ``source`` as Snakemake runs a Snakefile; its namespace."""
    path = folder / name
    path.write_text(textwrap.dedent(source))
    namespace: dict = {"__name__": "snakemake.workflow", "__builtins__": __builtins__}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace


def run_digest(folder: Path, source: str, entry: str = "run") -> str:
    namespace = snakefile(folder, source)
    return CodeFollower([folder], stable_repr).digest(namespace[entry], "rule r")


def test_every_opcode_with_a_name_argument_is_classified():
    """The external list: ``dis.hasname``. A Python with a new name opcode fails here until
    NAME_OPS says whether its name is a global, an import or an attribute."""
    assert {dis.opname[op] for op in dis.hasname} <= set(NAME_OPS)
    assert set(NAME_OPS.values()) == {"global", "import", "attribute"}


BASE = """
GREETING = "hi"
UNUSED = 1

def fmt(x, suffix="!"):
    return f"{GREETING} {x}{suffix}"

class Style:
    SEP = "-"
    def join(self, items):
        return self.SEP.join(items)

def run():
    return fmt(Style().join(["a", "b"]))
"""

CHANGES = {
    "a global a called function reads": ('GREETING = "hi"', 'GREETING = "hello"'),
    "a called function's code": ('return f"{GREETING} {x}{suffix}"', 'return f"{x}{suffix}"'),
    "a default argument": ('suffix="!"', 'suffix="?"'),
    "a class attribute": ('SEP = "-"', 'SEP = "+"'),
    "a method's code": ("return self.SEP.join(items)", "return self.SEP.join(items[::-1])"),
    "the run body": ('["a", "b"]', '["b", "a"]'),
}
SAME = {
    "a global nothing reaches": ("UNUSED = 1", "UNUSED = 2"),
    "lines moved by a comment": ("\nGREETING", "\n# a comment\n\n\nGREETING"),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_change_to_anything_run_reaches_changes_its_digest(tmp_path, change):
    old, new = CHANGES[change]
    assert old in BASE
    assert run_digest(tmp_path, BASE) != run_digest(tmp_path, BASE.replace(old, new))


@pytest.mark.parametrize("change", sorted(SAME))
def test_changes_nothing_reaches_keep_the_digest(tmp_path, change):
    old, new = SAME[change]
    assert old in BASE
    assert run_digest(tmp_path, BASE) == run_digest(tmp_path, BASE.replace(old, new))


def test_closures_lambdas_comprehensions_and_partials_are_followed(tmp_path):
    source = """
    import functools
    K = 3
    def make(n):
        def inner(x):
            return [K * y for y in range(x)] + [n]
        return inner
    scale = make(2)
    half = functools.partial(lambda a, b: a / b + K, b=2)
    def run():
        return scale(2), half(4)
    """
    base = run_digest(tmp_path, source)
    assert run_digest(tmp_path, source.replace("K = 3", "K = 4")) != base  # in a comprehension
    assert run_digest(tmp_path, source.replace("make(2)", "make(5)")) != base  # a closure cell
    assert run_digest(tmp_path, source.replace("b=2)", "b=3)")) != base  # a partial's keyword


def test_recursion_terminates_and_still_sees_changes(tmp_path):
    source = """
    def even(n):
        return n == 0 or odd(n - 1)
    def odd(n):
        return n != 0 and even(n - 1)
    def run():
        return even(4)
    """
    assert run_digest(tmp_path, source) != run_digest(tmp_path, source.replace("n != 0", "n > 0"))


def test_workflow_modules_and_packages_count_by_their_files_imported_or_not(tmp_path):
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("from .sub import VALUE\n")
    (tmp_path / "mypkg" / "sub.py").write_text("VALUE = 1\n")
    (tmp_path / "flat.py").write_text("X = 1\n")
    source = """
    def run():
        import mypkg
        from flat import X
        return mypkg.VALUE + X
    """
    sys.modules.pop("mypkg", None)
    sys.modules.pop("flat", None)
    base = run_digest(tmp_path, source)
    (tmp_path / "mypkg" / "sub.py").write_text("VALUE = 2\n")
    after_package = run_digest(tmp_path, source)
    (tmp_path / "flat.py").write_text("X = 2\n")
    after_flat = run_digest(tmp_path, source)
    assert len({base, after_package, after_flat}) == 3


def test_an_import_not_made_yet_is_found_where_python_will_find_it(tmp_path, monkeypatch):
    # Snakemake puts an included file's folder on sys.path: a block there imports from it.
    rules = tmp_path / "rules"
    (rules / "rpkg").mkdir(parents=True)
    (rules / "late.py").write_text("VALUE = 1\n")
    (rules / "rpkg" / "__init__.py").write_text("")
    (rules / "rpkg" / "sub.py").write_text("VALUE = 1\n")
    (tmp_path / "late.py").write_text("VALUE = 'shadowed'\n")  # later on sys.path
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(rules))
    for name in ("late", "rpkg", "rpkg.sub"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    source = """
    def run():
        import late
        from rpkg import sub
        return late.VALUE, sub.VALUE
    """
    base = run_digest(tmp_path, source)
    (tmp_path / "late.py").write_text("VALUE = 'shadowed, edited'\n")
    assert run_digest(tmp_path, source) == base  # not the module Python loads
    (rules / "late.py").write_text("VALUE = 2\n")
    after_module = run_digest(tmp_path, source)
    (rules / "rpkg" / "sub.py").write_text("VALUE = 2\n")
    after_package = run_digest(tmp_path, source)
    assert len({base, after_module, after_package}) == 3
    assert "late" not in sys.modules  # found, not imported


def test_a_module_found_nowhere_or_loaded_by_name_counts_every_workflow_file(tmp_path):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "scaler_x1.py").write_text("FACTOR = 10\n")
    (tmp_path / "methods").mkdir()
    (tmp_path / "methods" / "__init__.py").write_text("")
    (tmp_path / "methods" / "scale_x1.py").write_text("F = 2\n")
    late = """
    def run():
        import sys
        sys.path.insert(0, "lib")
        import scaler_x1
        return scaler_x1.FACTOR
    """
    by_name = """
    def run(name="scale_x1"):
        import importlib
        return importlib.import_module("methods." + name).F
    """
    before = run_digest(tmp_path, late), run_digest(tmp_path, by_name)
    (tmp_path / "lib" / "scaler_x1.py").write_text("FACTOR = 100\n")
    (tmp_path / "methods" / "scale_x1.py").write_text("F = 3\n")
    after = run_digest(tmp_path, late), run_digest(tmp_path, by_name)
    assert before[0] != after[0] and before[1] != after[1]
    assert "scaler_x1" not in sys.modules


def test_a_module_not_imported_yet_counts_what_it_imports_in_turn(tmp_path, monkeypatch):
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "normalize_x2.py").write_text("import os\nfrom units_x2 import F\n")
    (tmp_path / "lib" / "units_x2.py").write_text("F = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path / "lib"))
    source = """
    def run():
        import normalize_x2
        return normalize_x2.F
    """
    before = run_digest(tmp_path, source)
    (tmp_path / "lib" / "units_x2.py").write_text("F = 2\n")
    assert run_digest(tmp_path, source) != before
    assert "normalize_x2" not in sys.modules and "units_x2" not in sys.modules


def test_a_module_global_counts_by_its_source(tmp_path, monkeypatch):
    (tmp_path / "helpers.py").write_text("def f():\n    return 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("helpers", None)
    source = """
    import helpers
    def run():
        return helpers.f()
    """
    base = run_digest(tmp_path, source)
    (tmp_path / "helpers.py").write_text("def f():\n    return 2\n")
    assert run_digest(tmp_path, source) != base
    sys.modules.pop("helpers", None)


def test_installed_code_counts_by_name_not_by_walking_it(tmp_path):
    """json.dumps and functools.reduce are the software environment's business."""
    follower = CodeFollower([tmp_path], stable_repr)
    assert follower.digest(__import__("json").dumps, "x") == follower.digest(
        __import__("json").dumps, "y"
    )
    assert follower.digest(functools.reduce, "x")  # a builtin: by its name


def test_what_has_no_stable_form_is_refused_with_the_path_to_it(tmp_path):
    source = """
    CACHE = {"model": OPAQUE}
    def helper():
        return CACHE["model"]
    def run():
        return helper()
    """
    path = tmp_path / "Snakefile"
    path.write_text(textwrap.dedent(source))
    namespace = {"__name__": "snakemake.workflow", "OPAQUE": threading.Lock()}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    follower = CodeFollower([tmp_path], stable_repr)
    with pytest.raises(Unfollowable, match=r"rule r -> helper -> CACHE"):
        follower.digest(namespace["run"], "rule r")


def test_a_snakefile_class_without_methods_counts_by_its_attributes(tmp_path):
    """Its __module__ is Snakemake's namespace module: still the workflow's own."""
    source = """
    class Cfg:
        N = 1
    def run():
        return Cfg.N
    """
    assert run_digest(tmp_path, source) != run_digest(tmp_path, source.replace("N = 1", "N = 2"))


def test_code_names_sees_globals_and_imports_in_nested_code():
    def outer():
        import os.path  # noqa: F401

        return [GLOBAL_A for _ in range(1)], (lambda: GLOBAL_B)  # noqa: F821

    names, imports = code_names(outer.__code__)
    assert {"GLOBAL_A", "GLOBAL_B"} <= names
    assert "os.path" in imports


def test_keyword_coverage_classifies_every_keyword_of_the_installed_snakemake():
    """The external list: the installed Snakemake's parser tables. A new keyword fails here
    until KEYWORD_COVERAGE (shown in docs/checkpoints.md) says how the key covers it."""
    from snakemake import parser

    from snakemake_executor_plugin_sticky._provenance import KEYWORD_COVERAGE

    grammar = {
        "rule": {*parser.rule_property_subautomata, *parser.rule_run_subautomata},
        "global": set(parser.Python.subautomata),
        "module": set(parser.Module.subautomata),
    }
    for table, keywords in grammar.items():
        assert set(KEYWORD_COVERAGE[table]) == keywords, table
    docs = (Path(__file__).parents[3] / "docs" / "checkpoints.md").read_text()
    for table, keywords in grammar.items():
        for keyword in keywords:
            assert f"`{keyword}`" in docs, f"docs/checkpoints.md does not name {table} {keyword}"


RED_TEAM = {
    # The red team's run: cases (issue 26, round 1): each edit must change the digest.
    "a function attribute": (
        "def label():\n    return label.prefix\nlabel.prefix = 'p1-'\n"
        "def run():\n    return label()\n",
        ("'p1-'", "'p2-'"),
    ),
    "a dict global's order": (
        "ORDER = {'a': 1, 'b': 2}\ndef run():\n    return list(ORDER)\n",
        ("{'a': 1, 'b': 2}", "{'b': 2, 'a': 1}"),
    ),
    "a global read through globals()": (
        "WORD = 'x'\ndef run():\n    return globals()['WORD']\n",
        ("WORD = 'x'", "WORD = 'y'"),
    ),
    "a global read through eval": (
        "WORD = 'x'\ndef run():\n    return eval('WORD')\n",
        ("WORD = 'x'", "WORD = 'y'"),
    ),
    "an lru_cache function's code": (
        "import functools\n@functools.lru_cache\ndef f():\n    return 1\n"
        "def run():\n    return f()\n",
        ("return 1", "return 2"),
    ),
    "a singledispatch implementation": (
        "from functools import singledispatch\n@singledispatch\ndef render(x):\n"
        "    return 'obj'\n@render.register\ndef _(x: int):\n    return 'int:' + str(x)\n"
        "def run():\n    return render(3)\n",
        ("'int:'", "'integer:'"),
    ),
    "a field a repr leaves out": (
        "class Model:\n    def __init__(self, d):\n        self.d = d\n    def __repr__(self):\n"
        "        return 'Model'\nM = Model(18)\ndef run():\n    return M.d\n",
        ("Model(18)", "Model(34)"),
    ),
}


@pytest.mark.parametrize("case", sorted(RED_TEAM))
def test_red_team_run_cases_change_the_digest(tmp_path, case):
    source, (old, new) = RED_TEAM[case]
    assert old in source
    assert run_digest(tmp_path, source) != run_digest(tmp_path, source.replace(old, new))


def test_a_module_global_the_snakefile_changes_after_import_counts(tmp_path, monkeypatch):
    """helpers.SETTINGS.update(unit=...) in the Snakefile: the module's file is unchanged."""
    (tmp_path / "helpers_settings.py").write_text(
        "SETTINGS = {'unit': 'cm'}\ndef fmt(x):\n    return str(x) + SETTINGS['unit']\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    digests = []
    for unit in ("mm", "in"):
        sys.modules.pop("helpers_settings", None)
        source = f"import helpers_settings\nhelpers_settings.SETTINGS.update(unit={unit!r})\n"
        source += "def run():\n    return helpers_settings.fmt(5)\n"
        digests.append(run_digest(tmp_path, source))
    sys.modules.pop("helpers_settings", None)
    assert digests[0] != digests[1]


def test_a_module_taken_from_sys_modules_by_name_counts(tmp_path, monkeypatch):
    """The red team: sys.modules["helpers7"].label(), helpers7 imported under another name."""
    (tmp_path / "helpers_by_name.py").write_text("def label():\n    return 'v1'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    source = (
        "import helpers_by_name as _h\nimport sys\n"
        "def run():\n    return sys.modules['helpers_by_name'].label()\n"
    )
    sys.modules.pop("helpers_by_name", None)
    before = run_digest(tmp_path, source)
    (tmp_path / "helpers_by_name.py").write_text("def label():\n    return 'v2'\n")
    sys.modules.pop("helpers_by_name", None)
    assert run_digest(tmp_path, source) != before
    sys.modules.pop("helpers_by_name", None)


def test_a_block_drawing_from_a_seeded_global_generator_counts_its_seed(tmp_path):
    """The red team's final case: random.seed(42) in the Snakefile, edited to 43; a block
    that does not draw keeps its digest whatever the generator's state (unseeded, it comes
    from the OS and would make every block rerun)."""
    import random

    drawing = "import random\ndef run():\n    return random.randint(0, 10)\n"
    plain = "def run():\n    return 1\n"
    digests = {}
    for seed in (42, 43):
        random.seed(seed)
        digests[seed] = (run_digest(tmp_path, drawing), run_digest(tmp_path, plain))
    assert digests[42][0] != digests[43][0]
    assert digests[42][1] == digests[43][1]
