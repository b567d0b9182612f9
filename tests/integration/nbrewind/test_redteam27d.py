"""The fourth red team's cases (redteam27d_cases.py): repeat == stock run, and no hang.

Each case: build the notebook (a tagged parameters cell when it has parameters), audit it,
apply the edits and file changes, copy the folder for the stock run, repeat, run stock, and
compare every code cell's outputs (streams joined; object addresses, kernel temp paths and the
run folder masked; SVG images by kind only, since matplotlib writes a date and random ids into
every SVG) and the files the runs leave. CI runs the first-pass failures and every tenth other
case (14 of 58, to fit CI's time); ``NBREWIND_REDTEAM_ALL=1`` runs all 58.
"""

import hashlib
import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import nbformat
import pytest

from . import redteam27d_cases as rt

pytestmark = pytest.mark.integration

ALL = os.environ.get("NBREWIND_REDTEAM_ALL") == "1"
NAMES = sorted(rt.CASES)
SELECTED = [n for i, n in enumerate(NAMES) if ALL or n in rt.FIRST_PASS_FAILURES or i % 10 == 0]
TIMEOUT = 120


def _papermill(source: str, dest: str, kernel: str, params: Any, cwd: Path, engine: bool):
    cmd = ["timeout", str(TIMEOUT), "papermill", source, dest, "-k", kernel]
    if engine:
        cmd += ["--engine", "nbrewind"]
    for key, value in (params or {}).items():
        cmd += ["-p", key, str(value)]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)


def _mask(text: str, run: Path) -> str:
    text = re.sub(r"/tmp/ipykernel_\d+/", "/tmp/ipykernel_N/", text)
    text = re.sub(r" at 0x[0-9a-f]+", " at 0xADDR", text)
    return text.replace(str(run), "<run>")


def _outputs(cell: Any, run: Path) -> list[Any]:
    found: list[Any] = []
    streams: dict[str, str] = {}
    for output in cell.get("outputs", []):
        kind = output["output_type"]
        if kind == "stream":
            streams[output["name"]] = streams.get(output["name"], "") + output["text"]
        elif kind in ("execute_result", "display_data"):
            data = dict(output["data"])
            for mime in list(data):
                if mime == "image/svg+xml":
                    data[mime] = "svg"
                elif mime.startswith("image/"):
                    data[mime] = hashlib.sha256(str(data[mime]).encode()).hexdigest()[:12]
            found.append((kind, _mask(json.dumps(data, sort_keys=True), run)))
        elif kind == "error":
            found.append(("error", output["ename"], output["evalue"]))
    found.extend(("stream", k, _mask(v, run)) for k, v in sorted(streams.items()))
    return found


def _code_cells(nb: Any) -> list[Any]:
    return [
        c
        for c in nb.cells
        if c.cell_type == "code" and "injected-parameters" not in c.metadata.get("tags", [])
    ]


def _files(root: Path) -> dict[str, str]:
    found = {}
    for path in root.rglob("*"):
        parts = set(path.relative_to(root).parts)
        if parts & {".nbrewind", ".ipynb_checkpoints", "__pycache__"} or path.suffix == ".ipynb":
            continue
        if path.is_file():
            found[str(path.relative_to(root))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _edit(nb: Any, edits: list[Any]) -> None:
    for change in edits:
        if change[0] == "insert_after":
            _, sub, new = change
            (index,) = [
                i for i, c in enumerate(nb.cells) if c.cell_type == "code" and sub in c.source
            ]
            nb.cells.insert(index + 1, nbformat.v4.new_code_cell(new))
        elif change[0] == "delete":
            _, sub = change
            (index,) = [
                i for i, c in enumerate(nb.cells) if c.cell_type == "code" and sub in c.source
            ]
            del nb.cells[index]
        else:
            old, new = change
            (cell,) = [c for c in _code_cells(nb) if old in c.source]
            cell.source = cell.source.replace(old, new)


@pytest.mark.parametrize("name", SELECTED)
def test_repeat_equals_stock(tmp_path, name):
    case = rt.CASES[name]
    work, stock = tmp_path / "work", tmp_path / "stock"
    work.mkdir()
    _write(work, case.get("files_setup") or {})
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    if case.get("params") is not None:
        cell = nbformat.v4.new_code_cell(
            "\n".join(f"{k} = {v!r}" for k, v in case["params"].items())
        )
        cell.metadata["tags"] = ["parameters"]
        nb.cells.append(cell)
    nb.cells.extend(nbformat.v4.new_code_cell(source) for source in case["cells"])
    nbformat.write(nb, str(work / "in.ipynb"))
    audit = _papermill("in.ipynb", "out.ipynb", "nbrewind-audit", case.get("p_audit"), work, True)
    assert audit.returncode != 124, "the audit hung"
    assert (work / "out.ipynb").exists(), audit.stderr[-2000:]
    out = nbformat.read(str(work / "out.ipynb"), as_version=4)
    _edit(out, case.get("edits") or [])
    nbformat.write(out, str(work / "edited.ipynb"))
    _write(work, case.get("files_edit") or {})
    shutil.copytree(
        work, stock, ignore=shutil.ignore_patterns(".nbrewind", "out.ipynb", "in.ipynb")
    )
    params = case.get("p_repeat")
    again = _papermill("edited.ipynb", "again.ipynb", "nbrewind-repeat", params, work, True)
    fresh = _papermill("edited.ipynb", "stock.ipynb", "python3", params, stock, False)
    assert again.returncode != 124, "the repeat hung"
    assert (again.returncode == 0) == (fresh.returncode == 0), again.stderr[-2000:]
    got = _code_cells(nbformat.read(str(work / "again.ipynb"), as_version=4))
    want = _code_cells(nbformat.read(str(stock / "stock.ipynb"), as_version=4))
    assert len(got) == len(want)
    differing = [
        (i, c.source[:80], c.metadata.get("nbrewind", {}).get("reason"))
        for i, (c, w) in enumerate(zip(got, want, strict=True))
        if _outputs(c, work) != _outputs(w, stock)
    ]
    assert not differing, differing
    assert _files(work) == _files(stock)
