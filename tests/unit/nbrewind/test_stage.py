"""The pure core of rules/notebook.smk's job: its parameters and the records it carries over."""

from pathlib import Path

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbrewind._stage import Stage, StageError, carry_records, has_records, parameters_for
from tests.conftest import examples

_names = st.sampled_from(["alpha", "sample", "n", "data", "seed"])
_values = st.one_of(st.integers(), st.text(max_size=5), st.floats(allow_nan=False))


@settings(max_examples=examples(60), deadline=None)
@given(
    config=st.dictionaries(_names, _values),
    wildcards=st.dictionaries(_names, st.text(max_size=5)),
    named=st.dictionaries(_names, _values),
    several=st.dictionaries(_names, _values),
)
def test_parameters_come_from_config_then_wildcards_then_params(config, wildcards, named, several):
    params = {**named, "parameters": several}
    got = parameters_for("fit", {"notebook_parameters": {"fit": config}}, wildcards, params)
    for name in set(config) | set(wildcards) | set(named) | set(several):
        layers = [config, wildcards, named, several]
        expected = [layer[name] for layer in layers if name in layer][-1]
        assert got[name] == expected or got[name] != got[name]
    assert set(got) == set(config) | set(wildcards) | set(named) | set(several)


def test_bad_parameters_are_one_clear_line():
    with pytest.raises(StageError, match="params.parameters must be a dict"):
        parameters_for("fit", {}, {}, {"parameters": [1, 2]})
    with pytest.raises(StageError, match="notebook_parameters.fit must map"):
        parameters_for("fit", {"notebook_parameters": {"fit": 3}}, {}, {})


def _nb(sources, records=False, injected=False):
    nb = nbformat.v4.new_notebook()
    nb.cells.append(nbformat.v4.new_markdown_cell("# title"))
    for i, source in enumerate(sources):
        cell = nbformat.v4.new_code_cell(source)
        cell.id = f"c{i}"
        if records:
            cell.metadata["nbrewind"] = {"source": source, "sig": "s"}
            cell.outputs = [nbformat.v4.new_output("stream", text=source)]
            cell.execution_count = i + 1
        nb.cells.append(cell)
    if injected:
        cell = nbformat.v4.new_code_cell("alpha = 2")
        cell.metadata["tags"] = ["injected-parameters"]
        cell.metadata["nbrewind"] = {"source": "alpha = 2"}
        nb.cells.insert(2, cell)
    if records:
        nb.metadata["nbrewind"] = {"parameters": "sha256:p"}
    return nb


def test_records_are_carried_by_cell_id_into_the_edited_notebook():
    kept = _nb(["a = 1", "b = a", "print(b)"], records=True, injected=True)
    authored = _nb(["a = 1", "b = a + 1", "print(b)", "c = 3"])
    merged = carry_records(authored, kept)
    code = [c for c in merged.cells if c.cell_type == "code"]
    assert [c.source for c in code] == ["a = 1", "b = a + 1", "print(b)", "c = 3"]
    assert [c.metadata.get("nbrewind", {}).get("source") for c in code] == [
        "a = 1",
        "b = a",  # the old record: repeat sees the source changed and re-executes the cell
        "print(b)",
        None,
    ]
    assert code[2].outputs[0]["text"] == "print(b)" and code[2].execution_count == 3
    assert merged.metadata["nbrewind"] == {"parameters": "sha256:p"}
    assert not has_records(authored) and has_records(merged)
    assert "nbrewind" not in authored.cells[1].metadata, "the authored notebook is not changed"


def test_without_cell_ids_records_are_carried_by_position_among_code_cells():
    kept = _nb(["a = 1", "b = 2"], records=True, injected=True)
    for cell in kept.cells:
        cell.pop("id", None)
    authored = _nb(["a = 1", "b = 2"])
    for cell in authored.cells:
        cell.pop("id", None)
    code = [c for c in carry_records(authored, kept).cells if c.cell_type == "code"]
    assert [c.metadata["nbrewind"]["source"] for c in code] == ["a = 1", "b = 2"]


def test_the_kept_notebook_lives_under_the_records_directory():
    stage = Stage(Path("nb.ipynb"), Path("results/a/fit.ipynb"), {}, workdir=Path("/w"))
    assert stage.kept == Path(".nbrewind-stages/notebooks/results/a/fit.ipynb")
    assert stage.store == Path(".nbrewind-stages/store")


class _Named(list):
    """What Snakemake hands a script: a list with names (snakemake.io.Namedlist's surface)."""

    def __init__(self, **named):
        super().__init__(named.values())
        self._named = named

    def items(self):
        return self._named.items()


class _Job:
    def __init__(self, inputs, outputs, params=None, wildcards=None, config=None):
        self.rule = "fit"
        self.input, self.output = _Named(**inputs), _Named(**outputs)
        self.params, self.wildcards = _Named(**(params or {})), _Named(**(wildcards or {}))
        self.config = config or {}


def test_a_job_becomes_a_stage_and_a_missing_notebook_name_is_one_clear_line():
    from nbrewind._stage import stage_from_snakemake

    job = _Job(
        {"notebook": "nb/fit.ipynb", "data": "data/a.csv"},
        {"notebook": "results/a/fit.ipynb", "model": "results/a/model.json"},
        params={"alpha": 2.0},
        wildcards={"sample": "a"},
        config={"nbrewind": {"records": "state"}},
    )
    stage = stage_from_snakemake(job)
    assert stage.notebook == Path("nb/fit.ipynb") and stage.inputs == (Path("data/a.csv"),)
    assert stage.outputs == (Path("results/a/model.json"),)
    assert stage.parameters == {"sample": "a", "alpha": 2.0}
    assert stage.kept == Path("state/notebooks/results/a/fit.ipynb")
    with pytest.raises(StageError, match="name the notebook input and the executed notebook"):
        stage_from_snakemake(_Job({"nb": "x.ipynb"}, {"notebook": "y.ipynb"}))
