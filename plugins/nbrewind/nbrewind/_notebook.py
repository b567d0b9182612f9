"""Operations on audited notebooks at rest: pack, inspect, trust, import JupyterLab records."""

import base64
import hashlib
import json
import os
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import nbformat

from ._dataflow import analyse_cell, source_hash
from ._inputs import InputError, notebook_inputs
from ._inputs import bundle as bundle_inputs
from ._objects import STORE_DIRNAME, BlobError, copy_into, get_blob, has_object, put_blob
from ._record import (
    FORMAT_VERSION,
    STATE_START,
    checkpoints,
    files_written,
    relative_inside,
    state_after,
)
from ._review import CheckpointReview, review_entry
from ._signing import Trust, key_id, load_key, sign, verify, verify_lab_line

LAB_RECORDS = "lab"
"""Folder of the store directory where the audit kernel, run by JupyterLab, appends records."""


class NotebookError(Exception):
    """A notebook given to an nbrewind command cannot be used."""


def outputs_digest(outputs: Iterable[Any]) -> str:
    """Identity of a cell's outputs, so that edited or cleared outputs are never restored."""
    data = json.dumps(list(outputs), sort_keys=True, separators=(",", ":"), default=str)
    return "sha256:" + hashlib.sha256(data.encode()).hexdigest()


def lab_records_path(notebook: Path) -> Path:
    return notebook.parent / STORE_DIRNAME / LAB_RECORDS / f"{notebook.name}.jsonl"


def read_notebook(path: Path) -> Any:
    try:
        return nbformat.read(str(path), as_version=4)
    except FileNotFoundError:
        raise NotebookError(f"{path}: no such notebook") from None
    except Exception as e:  # noqa: BLE001 - nbformat raises many kinds
        raise NotebookError(f"{path} is not a readable notebook: {e}") from None


def write_notebook(nb: Any, path: Path) -> None:
    """Atomically: a reader never sees half a notebook."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        nbformat.write(nb, str(tmp))
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def store_roots(path: Path, nb: Any) -> list[Path]:
    roots = []
    if os.environ.get("NBREWIND_STORE"):
        roots.append(Path(os.environ["NBREWIND_STORE"]))
    store = (nb.metadata.get("nbrewind") or {}).get("store") or STORE_DIRNAME
    roots.append((path.parent / store).resolve())
    roots.append(path.parent.resolve() / STORE_DIRNAME)
    return list(dict.fromkeys(roots))


def records(nb: Any) -> list[tuple[int, dict[str, Any]]]:
    return [
        (i, c.metadata["nbrewind"])
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code" and isinstance(c.metadata.get("nbrewind"), dict)
    ]


def pack(
    source: Path,
    dest: Path,
    bundle: bool = False,
    with_inputs: bool = False,
    cwd: Optional[Path] = None,
) -> dict[str, int]:
    """Write ``dest``: every checkpoint inline (one self-contained file), or, with ``bundle``,
    the notebook plus a ``.nbrewind/`` object store beside it holding exactly what it uses.

    ``with_inputs`` also copies the input files the records name (relative paths, found under
    ``cwd``, by default the source notebook's directory, where they must still have the
    content the cells read) into that store, content addressed: a repeat at a site that has
    only the notebook and its store puts them back (see :mod:`nbrewind._inputs`). Inputs
    named by an absolute path (outside the working directory) are left out and counted in
    ``inputs_skipped``. Whenever a store is written, the files the cells wrote that the
    source store kept go into it too (``files_written``)."""
    if Path(dest).is_dir():
        raise NotebookError(
            f"{dest} is a directory; name the notebook to write in it: {Path(dest) / 'out.ipynb'}"
        )
    nb = read_notebook(source)
    roots = store_roots(source, nb)
    dest_store = dest.parent.resolve() / STORE_DIRNAME
    counts = {"inlined": 0, "bundled": 0}
    for _, record in records(nb):
        for name, entry in checkpoints(record):
            if "digest" not in entry:
                continue
            try:
                blob = get_blob(entry, roots)
            except BlobError as e:
                raise NotebookError(f"cannot pack {source}: value {name!r}: {e}") from None
            entry.pop("inline", None)
            entry.pop("object", None)
            if bundle:
                entry.update(put_blob(blob, entry["digest"], dest_store, limit=-1))
                counts["bundled"] += 1
            else:
                entry["inline"] = base64.b64encode(blob).decode("ascii")
                counts["inlined"] += 1
    if with_inputs:
        base = (cwd or source.parent).resolve()
        try:
            counts["inputs"], skipped = bundle_inputs(
                list(notebook_inputs(records(nb))), base, dest_store
            )
        except InputError as e:
            raise NotebookError(f"cannot pack {source} with its inputs: {e}") from None
        counts["inputs_skipped"] = len(skipped)
    if bundle or with_inputs:
        counts["files_written"] = _carry_written_files(nb, roots, dest_store)
    nb.metadata.setdefault("nbrewind", {})["store"] = STORE_DIRNAME
    dest.parent.mkdir(parents=True, exist_ok=True)
    write_notebook(nb, dest)
    return counts


def _carry_written_files(nb: Any, roots: list[Path], dest_store: Path) -> int:
    """Copy into the packed store the files the cells wrote that the source store kept (by
    digest), so that the other site restores those cells and puts the files back instead of
    re-executing them. Deleted files (digest None), paths outside the working directory and
    files too large to have been kept are not carried: repeat re-executes their writers."""
    carried = 0
    for _, record in records(nb):
        if record.get("workflow"):
            continue  # a workflow cell always re-executes: its outputs are the workflow's
        for path, digest in files_written(record).items():
            if digest is None or relative_inside(path) is None:
                continue
            if has_object(digest, roots):
                copy_into(digest, roots, dest_store)
                carried += 1
    return carried


@dataclass(frozen=True)
class CellRow:
    index: int  # in the notebook's cells (markdown included)
    status: str
    reason: str
    reads: list[str]
    writes: list[str]
    inline_bytes: int
    store_bytes: int
    trust: str
    number: str = ""  # as reasons name it: "3" for code cell 3, "params" for papermill's


def code_cell_numbers(cells: Any) -> dict[int, str]:
    """How reasons and ``nbrewind inspect`` number code cells, by their index in ``cells``:
    their place among the notebook's code cells, papermill's injected parameters cell and
    markdown cells not counted (so an audit and its repeat, with or without parameters,
    number alike), and ``"params"`` for the injected parameters cell."""
    numbers: dict[int, str] = {}
    order = 0
    for index, cell in enumerate(cells):
        if cell.cell_type != "code":
            continue
        if "injected-parameters" in cell.metadata.get("tags", []):
            numbers[index] = "params"
            continue
        order += 1
        numbers[index] = str(order)
    return numbers


def inspect(path: Path) -> list[CellRow]:
    nb = read_notebook(path)
    try:
        key: Optional[bytes] = load_key()
    except Exception:  # noqa: BLE001 - inspecting needs no key; say "unknown" instead
        key = None
    rows = []
    numbers = code_cell_numbers(nb.cells)
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        record = cell.metadata.get("nbrewind")
        if not isinstance(record, dict):
            rows.append(CellRow(index, "-", "no record", [], [], 0, 0, "-", numbers[index]))
            continue
        writes = record.get("writes", {})
        inline = sum(len(w.get("inline", "")) * 3 // 4 for w in writes.values())
        stored = sum(w.get("size", 0) for w in writes.values() if "object" in w)
        trust = verify(record, key).value if key is not None and "sig" in record else "-"
        rows.append(
            CellRow(
                index,
                str(record.get("status", "?")),
                str(record.get("reason", "")),
                sorted(record.get("reads", {})) + sorted(record.get("files_read", {})),
                [
                    f"{n}{'' if w.get('kind') != 'unpicklable' else '(unpicklable)'}"
                    for n, w in sorted(writes.items())
                ]
                + sorted(record.get("files_written", {})),
                inline,
                stored,
                trust,
                numbers[index],
            )
        )
    return rows


def format_table(rows: list[CellRow]) -> str:
    # "code cell N" in the reasons is row N: code cells counted as reasons count them.
    header = ("cell", "status", "trust", "inline", "store", "reads", "writes", "why")
    lines = [header]
    for r in rows:
        lines.append(
            (
                r.number or str(r.index),
                r.status,
                r.trust,
                _size(r.inline_bytes),
                _size(r.store_bytes),
                _names(r.reads),
                _names(r.writes),
                r.reason,
            )
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header) - 1)]
    out = []
    for line in lines:
        cells = [line[i].ljust(widths[i]) for i in range(len(widths))] + [line[-1]]
        out.append("  ".join(cells).rstrip())
    return "\n".join(out)


def _size(n: int) -> str:
    if n == 0:
        return "-"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f}{unit}" if unit == "B" else f"{n:.1f}{unit}"
        n /= 1024  # type: ignore[assignment]
    return str(n)


def _names(names: list[str], limit: int = 40) -> str:
    text = ",".join(names) or "-"
    return text if len(text) <= limit else text[: limit - 1] + "…"


def review(path: Path) -> list[CheckpointReview]:
    """For every checkpoint of the records ``trust`` would sign (those not yet trusted with
    this user's key), what restoring it would import, read from the pickle's opcodes without
    loading it (the record's own ``type`` field is shown too, but it is the author's claim).
    Fails, naming the cell and value, if a checkpoint is missing or does not match its digest."""
    nb = read_notebook(path)
    key = load_key()
    return _review_records(path, nb, key)


def _review_records(path: Path, nb: Any, key: bytes) -> list[CheckpointReview]:
    roots = store_roots(path, nb)
    reviews = []
    for index, record in _to_sign(nb, key):
        for name, entry in sorted(checkpoints(record), key=lambda item: item[0]):
            blob = None
            if "digest" in entry:
                try:
                    blob = get_blob(entry, roots)
                except BlobError as e:
                    raise NotebookError(
                        f"not trusting {path}: cell {index}, value {name!r}: {e}"
                    ) from None
            reviews.append(review_entry(index, name, entry, blob))
    return reviews


def _to_sign(nb: Any, key: bytes) -> list[tuple[int, dict[str, Any]]]:
    return [
        (index, record)
        for index, record in records(nb)
        if record.get("status") != "error"
        and isinstance(record.get("writes"), dict)
        and verify(record, key) is not Trust.TRUSTED
    ]


def trust(
    path: Path, approve: Optional[Callable[[list[CheckpointReview]], bool]] = None
) -> dict[str, int]:
    """Sign every record of a reviewed notebook with this user's key, after checking that every
    checkpoint blob it references is present and matches its digest.

    ``approve``, when given, is shown what each checkpoint would import (:func:`review`) and
    decides: if it returns False nothing is signed (``nbrewind trust`` asks the user)."""
    nb = read_notebook(path)
    key = load_key()
    reviews = _review_records(path, nb, key)
    pending = _to_sign(nb, key)
    already = sum(
        1 for _, record in records(nb) if record.get("status") != "error" and "writes" in record
    ) - len(pending)
    if approve is not None and pending and not approve(reviews):
        return {"signed": 0, "already": already, "declined": len(pending)}
    for _, record in pending:
        record["sig"] = sign(record, key)
    if pending:
        write_notebook(nb, path)
    return {"signed": len(pending), "already": already, "declined": 0}


def import_lab(path: Path) -> dict[str, int]:
    """Write into a notebook saved from JupyterLab the records its audit kernel kept beside it.

    JupyterLab, like nbclient, keeps no kernel reply metadata, so under JupyterLab the
    ``nbrewind-audit`` kernel appends each cell's record to
    ``.nbrewind/lab/<notebook>.jsonl`` (keyed by cell id). This takes, for each cell, its latest
    record whose source matches the saved cell, completes it with the saved outputs, and signs
    it. Cells run out of order are safe: a repeat re-executes any cell whose inputs differ.

    Lines not MAC'ed with this user's key by the audit kernel (``_signing.lab_mac``) are
    refused and counted in ``refused``: nothing in them is imported or signed."""
    nb = read_notebook(path)
    sidecar = lab_records_path(path)
    if not sidecar.is_file():
        raise NotebookError(
            f"no JupyterLab records for {path} ({sidecar} is missing): run the notebook in "
            "JupyterLab with the nbrewind-audit kernel first"
        )
    key = load_key()
    latest: dict[str, dict[str, Any]] = {}
    refused = 0
    # The state chain in the order the cells ran (the sidecar's): a cell restores in a repeat
    # (which runs the notebook in order) only if the state-changing cells ran before it in
    # that order, with the same inputs, in JupyterLab too.
    state = STATE_START
    sources = {source_hash(c.source): c.source for c in nb.cells if c.cell_type == "code"}
    for line in sidecar.read_text().splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut short by a killed kernel
        if not isinstance(entry, dict) or not isinstance(entry.get("record"), dict):
            refused += 1
            continue
        # Only lines MAC'ed by an audit kernel holding this user's key: the sidecar may have
        # arrived with a cloned repository, and what is imported here gets signed.
        if verify_lab_line(path.name, entry, key) is not Trust.TRUSTED:
            refused += 1
            continue
        entry["state"] = state
        text = sources.get(str(entry.get("source")))
        opaque = analyse_cell(text).opaque if text is not None else True
        ran = dict(entry["record"], source=entry.get("source"), opaque=opaque)
        if ran.get("status") != "executed":
            ran.update(effects={"other": ["failed"]}, unknowable="failed")
        state = state_after(state, ran)
        latest[str(entry.get("cell_id", ""))] = entry
    counts = {"imported": 0, "stale": 0, "missing": 0, "refused": refused}
    packages: dict[str, str] = {}
    python = None
    for cell in nb.cells:
        if cell.cell_type != "code" or not cell.source.strip():
            continue
        entry = latest.get(cell.get("id", ""))
        if entry is None or entry["record"].get("status") != "executed":
            counts["missing"] += 1
            continue
        if entry["source"] != source_hash(cell.source):
            counts["stale"] += 1
            continue
        record = {k: v for k, v in entry["record"].items() if k != "status"}
        record.update(
            v=FORMAT_VERSION,
            source=entry["source"],
            opaque=analyse_cell(cell.source).opaque,
            outputs=outputs_digest(cell.get("outputs", [])),
            execution_count=cell.get("execution_count"),
            state=entry["state"],
        )
        record["sig"] = sign(record, key)
        record["status"], record["reason"] = "executed", "recorded in JupyterLab"
        cell.metadata["nbrewind"] = record
        packages.update(record.get("packages", {}))
        python = record.get("python", python)
        counts["imported"] += 1
    nb.metadata["nbrewind"] = {
        "version": 1,
        "mode": "audit",
        "store": STORE_DIRNAME,
        "key_id": key_id(key),
        "env": {"python": python, "packages": dict(sorted(packages.items()))},
        "cells": {"executed": counts["imported"], "restored": 0},
        "source": "jupyterlab",
    }
    write_notebook(nb, path)
    return counts
