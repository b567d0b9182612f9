"""The independent red team's notebooks for NBRewind (issue 27; ``redteam27_cases.py``).

A helper that saw only docs/nbrewind.md (not the code, not the tests) wrote notebooks a data
scientist could write, with an edit, a changed parameter or a file changed between runs, and
ran them black-box: audit, edit, repeat; the stock ``python3`` kernel on the same edited
notebook and files. The repeat must equal the stock run: every code cell's outputs (streams,
results, errors), the working directory's files, and it must not hang.

CI runs every case that hung on the first pass, every third case that differed, and every
twentieth of the others (37 of 157, to fit CI's time); ``NBREWIND_REDTEAM_ALL=1`` runs them all
(``bench``-sized: about 25 minutes here). All 157 pass.
"""

import hashlib
import json
import os
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest

from .conftest import execute, make_notebook

sys.path.insert(0, str(Path(__file__).parent))
import redteam27_cases as rt  # noqa: E402

pytestmark = pytest.mark.integration

ALL = os.environ.get("NBREWIND_REDTEAM_ALL") == "1"
CASES = {c["name"]: c for c in rt.CASES}
NAMES = sorted(CASES)
SELECTED = [
    n
    for i, n in enumerate(NAMES)
    if ALL
    or n in rt.FIRST_PASS_HANGS
    or (n in rt.FIRST_PASS_FAILURES and i % 3 == 0)
    or i % 20 == 0
]
SKIP_FILES = {"in.ipynb", "out.ipynb", "again.ipynb", "stock.ipynb"}
SKIP_DIRS = {".nbrewind", "__pycache__", ".ipynb_checkpoints"}


def write_files(root: Path, files: dict[str, str]) -> None:
    for rel, text in (files or {}).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def edit(path: Path, change: list[Any]) -> None:
    nb = nbformat.read(str(path), as_version=4)
    index, source = change
    cells = [
        c
        for c in nb.cells
        if c.cell_type == "code" and "injected-parameters" not in c.metadata.get("tags", [])
    ]
    if index == len(cells):
        nb.cells.append(nbformat.v4.new_code_cell(source))
    else:
        cells[index].source = source
    nbformat.write(nb, str(path))


def summary(nb: Any) -> list[list[Any]]:
    """Per code cell: stream texts (kernel temp paths normalised), results, errors."""
    found = []
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        streams: dict[str, str] = {}
        parts: list[Any] = []
        for out in cell.get("outputs", []):
            kind = out.get("output_type")
            if kind == "stream":
                text = re.sub(r"ipykernel_\d+", "ipykernel_N", out["text"])
                streams[out["name"]] = streams.get(out["name"], "") + text
            elif kind in ("execute_result", "display_data"):
                parts.append([kind, out.get("data", {}).get("text/plain")])
            elif kind == "error":
                parts.append(["error", out.get("ename"), out.get("evalue", "")[:300]])
        found.append([*sorted(streams.items()), *parts])
    return found


def files(root: Path) -> dict[str, str]:
    found = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
        for name in filenames:
            rel = os.path.relpath(os.path.join(dirpath, name), root)
            if rel in SKIP_FILES:
                continue
            found[rel] = hashlib.sha256(Path(dirpath, name).read_bytes()).hexdigest()
    return found


def run_papermill(source: Path, dest: Path, kernel: str, cwd: Path, params: dict[str, Any]):
    from papermill.exceptions import PapermillExecutionError

    engine = "nbrewind" if kernel.startswith("nbrewind") else None
    try:
        execute(source, dest, kernel, engine=engine, cwd=cwd, **params)
    except PapermillExecutionError:
        pass  # a failing cell is an output like any other: compared below
    return nbformat.read(str(dest), as_version=4)


@pytest.mark.parametrize("name", SELECTED)
def test_repeat_equals_stock(tmp_path, name):
    case = CASES[name]
    run = tmp_path / "a"
    run.mkdir()
    write_files(run, case.get("files") or {})
    make_notebook(run / "in.ipynb", case["cells"])  # cell 0 tagged parameters
    run_papermill(
        run / "in.ipynb", run / "out.ipynb", "nbrewind-audit", run, case.get("audit_params") or {}
    )
    if case.get("edit"):
        edit(run / "out.ipynb", case["edit"])
    write_files(run, case.get("between_files") or {})
    stock_dir = tmp_path / "s"
    shutil.copytree(run, stock_dir, ignore=shutil.ignore_patterns(*SKIP_DIRS))
    params = case.get("repeat_params") or {}
    again = run_papermill(run / "out.ipynb", run / "again.ipynb", "nbrewind-repeat", run, params)
    stock = run_papermill(
        stock_dir / "out.ipynb", stock_dir / "stock.ipynb", "python3", stock_dir, params
    )
    got, want = summary(again), summary(stock)
    reasons = [
        (c.source[:50], c.metadata.get("nbrewind", {}).get("reason"))
        for c in again.cells
        if c.cell_type == "code"
    ]
    diverging = [(i, reasons[i], got[i], want[i]) for i in range(len(want)) if got[i] != want[i]]
    assert not diverging, json.dumps(diverging[:2], default=str)[:2000]
    assert files(run) == files(stock_dir), case.get("why")
