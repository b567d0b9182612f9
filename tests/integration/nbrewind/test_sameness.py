"""Issue 14, "Why": each scenario where a repeat used to differ from a fresh stock run.

Every test audits a notebook, optionally edits it and changes a parameter, repeats it with
``nbrewind-repeat``, runs the same edited notebook from the same files with the stock
``python3`` kernel, and compares every cell's outputs. Real papermill, real kernels.
"""

import shutil
from pathlib import Path
from typing import Any, Optional

import nbformat
import pytest

from .conftest import execute, executed, make_notebook, outputs, stdout

pytestmark = pytest.mark.integration


def repeat_and_stock(
    wd: Path,
    cells: list[str],
    audit: dict[str, Any],
    repeat: dict[str, Any],
    edit: Optional[tuple[int, str]] = None,
    between: Any = None,
    setup: Any = None,
) -> tuple[Any, Any]:
    """Audit in ``wd/run`` (after ``setup(run)``), edit, call ``between(run)``, then repeat
    there and run stock in a copy of it (the same files)."""
    run = wd / "run"
    run.mkdir(parents=True)
    if setup is not None:
        setup(run)
    source = make_notebook(run / "in.ipynb", cells)
    execute(source, run / "out.ipynb", "nbrewind-audit", cwd=run, **audit)
    if edit is not None:
        nb = nbformat.read(str(run / "out.ipynb"), as_version=4)
        code = [
            c
            for c in nb.cells
            if c.cell_type == "code" and "injected-parameters" not in c.metadata.get("tags", [])
        ]
        code[edit[0]].source = edit[1]
        nbformat.write(nb, str(run / "out.ipynb"))
    if between is not None:
        between(run)
    stock_dir = wd / "stock"
    shutil.copytree(run, stock_dir, ignore=shutil.ignore_patterns(".nbrewind"))
    again = execute(run / "out.ipynb", run / "again.ipynb", "nbrewind-repeat", cwd=run, **repeat)
    stock = execute(
        stock_dir / "out.ipynb",
        stock_dir / "s.ipynb",
        "python3",
        engine=None,
        cwd=stock_dir,
        **repeat,
    )
    return again, stock


def test_aliases_are_restored_as_one_object(tmp_path):
    cells = ["n = 1", 'cfg = {"k": 1}\nalias = cfg', 'alias.update({"k": n})', "print(cfg)"]
    again, stock = repeat_and_stock(tmp_path, cells, {"n": 1}, {"n": 5})
    assert outputs(again) == outputs(stock)
    assert "{'k': 5}" in str(outputs(again))


def test_nested_mutation_reaches_the_container(tmp_path):
    cells = [
        "depth = 1",
        'cfg = {"model": {"depth": 0, "trees": 40}}',
        'p = cfg["model"]',
        'p["depth"] = depth',
        "print(cfg)",
    ]
    again, stock = repeat_and_stock(tmp_path, cells, {"depth": 1}, {"depth": 7})
    assert outputs(again) == outputs(stock)
    assert "'depth': 7" in str(outputs(again))


def test_global_rng_state_is_an_input_and_an_output(tmp_path):
    cells = [
        "n = 3",
        "import random\nimport numpy as np\nnp.random.seed(0)\nrandom.seed(1)",
        "print(np.random.rand(2), random.random())",
        "import numpy\nprint(numpy.random.rand(n))",
        "print(np.random.rand(n))",
        "print(random.random(), np.random.rand())",
    ]
    again, stock = repeat_and_stock(tmp_path, cells, {"n": 3}, {"n": 4})
    assert outputs(again) == outputs(stock)
    assert "print(np.random.rand(2), random.random())" not in executed(again)


def test_files_with_computed_paths_and_written_by_a_cell(tmp_path):
    cells = [
        "n = 1",
        "import os\nfrom pathlib import Path",
        'os.makedirs("d", exist_ok=True)\n'
        'with open(os.path.join("d", "x" + ".txt"), "w") as f:\n    f.write(str(n))',
        'print(sorted(p.read_text() for p in Path("d").glob("*.txt")))',
        'print(open(os.path.join("inputs", "a" + ".txt")).read())',
    ]

    def seed_input(run: Path) -> None:
        (run / "inputs").mkdir()
        (run / "inputs" / "a.txt").write_text("original")

    def change_input(run: Path) -> None:
        (run / "inputs" / "a.txt").write_text("changed")

    again, stock = repeat_and_stock(
        tmp_path, cells, {"n": 1}, {"n": 2}, between=change_input, setup=seed_input
    )
    assert outputs(again) == outputs(stock)
    assert "['2']" in str(outputs(again)) and "changed" in str(outputs(again))


def test_a_file_overwritten_later_is_put_back_for_its_reader(tmp_path):
    cells = [
        "n = 1",
        'open("f.txt", "w").write("first")',
        'text = open("f.txt").read()\nprint(text, n)',
        'open("f.txt", "w").write("second")',
    ]
    again, stock = repeat_and_stock(tmp_path, cells, {"n": 1}, {"n": 2})
    assert outputs(again) == outputs(stock)
    assert "first 2" in str(outputs(again))


def test_a_generator_advanced_by_a_restored_cell_is_replayed(tmp_path):
    cells = [
        "k = 0",
        "g = (i * 10 for i in range(100))",
        "a = next(g)",
        'b = next(g)\nprint("b =", b)',
    ]
    edit = (3, 'b = next(g)\nprint("b =", b, "(edited)")')
    again, stock = repeat_and_stock(tmp_path, cells, {"k": 0}, {"k": 0}, edit=edit)
    assert outputs(again) == outputs(stock)
    assert "b = 10" in str(outputs(again))


# ---- part 6: failed repeats, reasons, imports ----------------------------------------------


def _notebook(path: Path, cells: list[tuple[str, str]]) -> Path:
    """Cells as (kind, source); the first code cell is tagged ``parameters``."""
    nb = nbformat.v4.new_notebook()
    tagged = False
    for kind, source in cells:
        if kind == "md":
            nb.cells.append(nbformat.v4.new_markdown_cell(source))
            continue
        cell = nbformat.v4.new_code_cell(source)
        if not tagged:
            cell.metadata["tags"], tagged = ["parameters"], True
        nb.cells.append(cell)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nbformat.write(nb, str(path))
    return path


def test_a_failed_repeat_clears_the_records_of_cells_it_never_reached(tmp_path):
    import papermill

    source = _notebook(
        tmp_path / "in.ipynb",
        [
            ("code", "n = 1"),
            ("code", "x = 1"),
            ("code", "if n > 1:\n    raise ValueError(n)"),
            ("code", "y = x + 1\nprint(y)"),
        ],
    )
    execute(source, tmp_path / "out.ipynb", "nbrewind-audit", n=1)
    with pytest.raises(papermill.PapermillExecutionError):
        execute(tmp_path / "out.ipynb", tmp_path / "again.ipynb", "nbrewind-repeat", n=2)
    nb = nbformat.read(str(tmp_path / "again.ipynb"), as_version=4)
    last = [c for c in nb.cells if c.cell_type == "code"][-1]
    record = last.metadata["nbrewind"]
    assert record["status"] == "not-run", record
    assert "stopped at code cell 3" in record["reason"]
    assert "sig" not in record and "writes" not in record


def test_reasons_name_cells_by_execution_order_among_code_cells_and_id(tmp_path):
    source = _notebook(
        tmp_path / "in.ipynb",
        [
            ("md", "# title"),
            ("code", "n = 1"),
            ("md", "text"),
            ("code", "a = n * 2"),
            ("md", "more"),
            ("code", "b = a + 1\nprint(b)"),
        ],
    )
    execute(source, tmp_path / "out.ipynb", "nbrewind-audit", n=1)
    nb = execute(tmp_path / "out.ipynb", tmp_path / "again.ipynb", "nbrewind-repeat", n=2)
    code = [c for c in nb.cells if c.cell_type == "code"]
    producer = next(c for c in code if c.source == "a = n * 2")
    reader = code[-1].metadata["nbrewind"]
    assert reader["status"] == "executed"
    assert reader["reason"] == f"reads a, which was recomputed by code cell 2 (id {producer.id})"


def test_restoring_does_not_import_modules_the_re_executed_cells_do_not_use(tmp_path):
    """Lazy restore: the re-executed cells reach none of the restored values, so nothing is
    loaded (no module imported for them). A cell that looked at ``sys.modules`` would reach the
    whole namespace (``sys.modules["__main__"]``) and load everything first, as a fresh run
    holds it: laziness is checked through the records."""
    cells = [
        "alpha = 1",
        "import json\nimport numpy as np\nimport pandas as pd\nimport sklearn.linear_model",
        'df = pd.DataFrame({"a": np.arange(5)})\nrecord = json.dumps({"n": 1})',
        "x = alpha * 2",
        "print(alpha, x)",
    ]
    source = make_notebook(tmp_path / "in.ipynb", cells)
    execute(source, tmp_path / "out.ipynb", "nbrewind-audit", alpha=1)
    nb = execute(tmp_path / "out.ipynb", tmp_path / "again.ipynb", "nbrewind-repeat", alpha=2)
    assert executed(nb) == {"# Parameters", "x = alpha * 2", "print(alpha, x)"}
    records = [c.metadata["nbrewind"] for c in nb.cells if c.cell_type == "code"]
    assert all(r.get("loaded") == [] for r in records if r["status"] == "executed")
    assert stdout(nb.cells[-1]) == "2 4\n"
