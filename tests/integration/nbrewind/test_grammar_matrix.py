"""Issue 27, part 4: repeat == stock over Python's statement and expression kinds x the ways a
value reaches a later cell (:mod:`.grammar_matrix`). One notebook per channel: audited with
``n=1``, repeated with ``n=2`` (the consumers of ``n``-derived values must re-execute, those of
``m`` may restore), and run with the stock kernel on the same files; every cell's outputs must
be equal, and no repeat may hang.

CI runs five channels (each about half a minute here): the value itself, read inside a nested
function (the hardest of the four call-time channels: function, method, closure, lambda), a
module attribute, a file and an environment variable; ``NBREWIND_GRAMMAR_ALL=1`` runs all
eight."""

import ast
import os
import shutil

import pytest

from .conftest import execute, make_notebook, outputs
from .grammar_matrix import (
    CHANNEL_FILES,
    CHANNELS,
    STATEMENTS,
    fill,
    node_kinds,
    notebook_cells,
    templates,
    unclassified,
)

ALL = os.environ.get("NBREWIND_GRAMMAR_ALL") == "1"
IN_CI = {"direct", "closure", "module", "file", "environment"}
SKIP = "runs with NBREWIND_GRAMMAR_ALL=1"


def test_every_statement_and_expression_kind_of_this_python_is_classified():
    assert unclassified() == set(), "write a template in grammar_matrix.py for each"
    assert set(templates()) <= node_kinds() | set(STATEMENTS)
    assert IN_CI <= set(CHANNELS)


@pytest.mark.parametrize("kind", sorted(templates()))
def test_each_template_contains_its_kind(kind):
    source = fill(templates()[kind], "base_0", 0)
    found = {type(node).__name__ for node in ast.walk(ast.parse(source))}
    assert kind in found, f"the {kind} template does not contain a {kind} node"


@pytest.mark.integration
@pytest.mark.parametrize(
    "channel",
    [
        c if ALL or c in IN_CI else pytest.param(c, marks=pytest.mark.skip(SKIP))
        for c in sorted(CHANNELS)
    ],
)
def test_repeat_equals_stock_for_every_kind(tmp_path, channel):
    run = tmp_path / "run"
    run.mkdir()
    for name, text in CHANNEL_FILES.items():
        (run / name).write_text(text)
    cells = notebook_cells(channel)
    make_notebook(run / "in.ipynb", cells)
    execute(run / "in.ipynb", run / "out.ipynb", "nbrewind-audit", cwd=run, n=1)
    stock_dir = tmp_path / "stock"
    shutil.copytree(run, stock_dir, ignore=shutil.ignore_patterns(".nbrewind"))
    again = execute(run / "out.ipynb", run / "again.ipynb", "nbrewind-repeat", cwd=run, n=2)
    stock = execute(
        stock_dir / "out.ipynb", stock_dir / "s.ipynb", "python3", engine=None, cwd=stock_dir, n=2
    )
    got, want = outputs(again), outputs(stock)
    diverging = [
        (i, cells[i].splitlines()[-1] if i < len(cells) else "", got[i], want[i])
        for i in range(len(want))
        if got[i] != want[i]
    ]
    assert not diverging, diverging[:3]
    statuses = [c.metadata.get("nbrewind", {}).get("status") for c in again.cells]
    assert "restored" in statuses, "the m-derived half restores"
