"""Kernelspec installation and the command line's handling of bad input."""

import json
from pathlib import Path

from jupyter_client.kernelspec import KernelSpecManager

from nbrewind import KERNEL_NAMES, install_kernels


def test_install_kernels_into_a_prefix_is_found_by_jupyter(tmp_path, monkeypatch):
    installed = install_kernels(prefix=str(tmp_path))
    assert len(installed) == 2
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "share" / "jupyter"))
    specs = KernelSpecManager().find_kernel_specs()
    for name in KERNEL_NAMES:
        spec = json.loads((Path(specs[name]) / "kernel.json").read_text())
        assert spec["argv"][:3] == ["python", "-m", "nbrewind.kernel"]
        assert spec["env"]["NBREWIND_MODE"] == name.removeprefix("nbrewind-")
        assert spec["env"]["PYTHONHASHSEED"] == "0", "set and dict pickles must be stable"


def test_inspect_numbers_rows_as_reasons_name_cells():
    """Issue 31's red team, case 38: the table numbered rows by notebook index (markdown and
    the injected parameters cell counted) while reasons said "code cell N" counting code
    cells only, so "recomputed by code cell 8" pointed at another row."""
    import nbformat
    import papermill  # noqa: F401 - before the engine module (its entry point imports it back)

    from nbrewind._notebook import CellRow, code_cell_numbers, format_table
    from nbrewind._papermill_engine import _cell_labels

    cells = [
        nbformat.v4.new_markdown_cell("# title"),
        nbformat.v4.new_code_cell("a = 1"),
        nbformat.v4.new_code_cell("alpha = 0.7", metadata={"tags": ["injected-parameters"]}),
        nbformat.v4.new_markdown_cell("text"),
        nbformat.v4.new_code_cell("b = a"),
    ]
    assert code_cell_numbers(cells) == {1: "1", 2: "params", 4: "2"}
    labels = _cell_labels(cells)
    assert labels[4].startswith("code cell 2") and labels[2] == "the injected parameters cell"
    rows = [CellRow(i, "executed", "why", [], [], 0, 0, "-", n) for i, n in [(1, "1"), (4, "2")]]
    table = format_table(rows).splitlines()
    assert [line.split()[0] for line in table[1:]] == ["1", "2"]
