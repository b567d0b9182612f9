"""Keys that cover what a job depends on: template modules, injective out-of-tree names,
values without a stable text form, the schema version, and ``state(snakemake)``."""

import copy
import dataclasses
import os
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from snakemake_executor_plugin_sticky import _provenance
from snakemake_executor_plugin_sticky._provenance import (
    KEY_SCHEMA,
    KeyComputer,
    Uncacheable,
    Unrepresentable,
    parse_site_roots,
    provenance_key,
    relative_path,
    script_config_reads,
    stable_repr,
)
from tests.conftest import examples


@pytest.mark.parametrize(
    "source",
    [
        "import stickyinvoc\nstate = stickyinvoc.state(snakemake)\nx = snakemake.config['a']",
        "from stickyinvoc import state\ns = state(snakemake)\nx = snakemake.config['a']",
        "import stickyinvoc as si\ns = si.state(snakemake=snakemake)\nx = snakemake.config['a']",
        "from stickyinvoc import state as st\ns = st(snakemake, template='t')\n"
        "x = snakemake.config.get('a')",
    ],
)
def test_state_of_snakemake_does_not_count_as_reading_the_whole_config(source):
    """The README's own idiom made every sticky job depend on the whole config."""
    assert script_config_reads(source) == {"a"}


@pytest.mark.parametrize(
    "source",
    [
        "from other import state\nstate(snakemake)",  # not stickyinvoc's state
        "import stickyinvoc\nstickyinvoc.state(helper(snakemake))",
        "import stickyinvoc\nstickyinvoc.other(snakemake)",
    ],
)
def test_other_calls_taking_snakemake_still_count_the_whole_config(source):
    assert script_config_reads(source) is None


class Opaque:
    def __init__(self, n: int) -> None:
        self.n = n


@pytest.mark.parametrize(
    "value",
    [
        threading.Lock(),
        [1, threading.Lock()],
        {"k": threading.Lock()},
        lambda: 1,
        (x for x in []),
    ],
)
def test_values_pickle_cannot_describe_have_no_stable_form(value):
    with pytest.raises(Unrepresentable):
        stable_repr(value)


def test_objects_count_by_their_whole_state_not_their_repr():
    """The red team (issue 26): a repr that leaves a field out, or a repr=False dataclass
    field, hid a change; objects now count by what pickle rebuilds them from."""

    class Big:
        def __init__(self, n: int) -> None:
            self.n = n

        def __repr__(self) -> str:
            return "Big([1, 2, ..., 9])"

    @dataclasses.dataclass
    class Config:
        name: str
        depth: int = dataclasses.field(repr=False, default=18)

    assert stable_repr(Big(1)) != stable_repr(Big(2))
    assert stable_repr(Opaque(1)) != stable_repr(Opaque(2))
    assert stable_repr(Opaque(1)) == stable_repr(Opaque(1))
    assert stable_repr(Config("r", 18)) != stable_repr(Config("r", 34))


values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.tuples(inner, inner)
        | st.frozensets(st.integers() | st.text(max_size=5), max_size=4)
        | st.dictionaries(st.text(max_size=5), inner, max_size=4)
    ),
    max_leaves=12,
)


@settings(max_examples=examples(60), deadline=None)
@given(values, values)
def test_stable_repr_never_gives_two_different_values_one_form(a, b):
    """Generated values: a form is deterministic, and one form means one value (of one type),
    so no change of a param or config value can go unseen."""
    assert stable_repr(copy.deepcopy(a)) == stable_repr(a)
    if stable_repr(a) == stable_repr(b):
        assert a == b and type(a) is type(b)


def test_set_order_does_not_change_the_form_and_dict_order_does():
    """A set's iteration order is the hash seed's; a dict's is the workflow's (iterating a
    dict param is what the job sees)."""
    assert stable_repr({"b", "a", "c"}) == stable_repr({"c", "a", "b"})
    assert stable_repr({"b": 1, "a": 2}) != stable_repr({"a": 2, "b": 1})


paths = st.lists(
    st.text(alphabet="abcxyz._-", min_size=1, max_size=6).filter(lambda p: p not in (".", "..")),
    min_size=1,
    max_size=4,
).map(lambda parts: "/" + "/".join(parts))


@settings(max_examples=examples(60))
@given(paths, paths)
def test_out_of_tree_names_are_injective(a, b):
    """/data/run1/sample.csv and /data/run2/sample.csv used to share <outside>/sample.csv."""
    workdir = Path("/work/wf")
    if os.path.abspath(a) != os.path.abspath(b):
        assert relative_path(a, workdir) != relative_path(b, workdir)


def test_site_roots_name_the_same_data_alike_at_two_sites():
    here = relative_path("/data/run1/x.csv", Path("/w"), parse_site_roots("data=/data"))
    there = relative_path(
        "/scratch/data/run1/x.csv", Path("/v"), parse_site_roots("data=/scratch/data")
    )
    assert here == there == "<data>/run1/x.csv"
    assert relative_path("/data/run1/x.csv", Path("/w")) == "<outside>/data/run1/x.csv"
    assert relative_path("/w/in/x.csv", Path("/w"), {"data": "/w"}) == "in/x.csv"
    for bad in ["data", "=/x", "a b=/x", "data=/x,data=/y", "outside=/x"]:
        with pytest.raises(ValueError, match="site root"):
            parse_site_roots(bad)


def test_the_template_component_covers_the_modules_the_templates_file_imports(tmp_path):
    """The Why case: sticky_templates.py imports modelhelper.py; editing modelhelper.py did
    not change the key, so the old output was restored."""
    (tmp_path / "sticky_templates.py").write_text("import modelhelper\nimport os\n")
    (tmp_path / "modelhelper.py").write_text("from deeper import K\nV = 1\n")
    (tmp_path / "deeper.py").write_text("K = 1\n")
    workflow = SimpleNamespace(config={}, basedir=str(tmp_path))

    def template_comps() -> dict[str, str]:
        return KeyComputer(workflow, tmp_path, tmp_path / "sticky_templates.py").templates

    before = template_comps()
    assert set(before) == {
        "template",
        "template-module:modelhelper.py",
        "template-module:deeper.py",
    }
    (tmp_path / "deeper.py").write_text("K = 2\n")
    after = template_comps()
    assert after["template-module:deeper.py"] != before["template-module:deeper.py"]
    assert provenance_key(after) != provenance_key(before)


def test_every_key_carries_the_schema_version(monkeypatch, tmp_path):
    workflow = SimpleNamespace(config={}, basedir=str(tmp_path))
    computer = KeyComputer(workflow, tmp_path, None)
    job = SimpleNamespace(
        rule=SimpleNamespace(name="r"),
        params=_Params(),
        wildcards={},
        output=[str(tmp_path / "out.txt")],
        log=[],
        benchmark=None,
        input=[],
        conda_env=None,
    )
    monkeypatch.setattr(computer, "_code_of", lambda job: ({"code:shell": "x"}, set()))
    comps = computer.components(job, None)
    assert comps["schema"] == KEY_SCHEMA
    monkeypatch.setattr(_provenance, "KEY_SCHEMA", "older")
    assert provenance_key(computer.components(job, None)) != provenance_key(comps)


def test_an_output_outside_the_working_directory_makes_the_job_uncacheable(tmp_path):
    computer = KeyComputer(SimpleNamespace(config={}, basedir=str(tmp_path)), tmp_path, None)
    computer._code_of = lambda job: ({}, set())
    job = SimpleNamespace(
        rule=SimpleNamespace(name="r"),
        params=_Params(),
        wildcards={},
        output=["/elsewhere/out.txt"],
        log=[],
        benchmark=None,
        input=[],
        conda_env=None,
    )
    with pytest.raises(Uncacheable, match="outside the working directory"):
        computer.components(job, None)


class _Params(dict):
    """Snakemake's params: named items (none here)."""
