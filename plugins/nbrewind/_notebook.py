"""Operations on audited notebooks at rest: pack, inspect, trust."""

import base64
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import nbformat

from ._objects import STORE_DIRNAME, BlobError, get_blob, put_blob
from ._signing import Trust, load_key, sign, verify


class NotebookError(Exception):
    """A notebook given to an nbrewind command cannot be used."""


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


def pack(source: Path, dest: Path, bundle: bool = False) -> dict[str, int]:
    """Write ``dest``: every checkpoint inline (one self-contained file), or, with ``bundle``,
    the notebook plus a ``.nbrewind/`` object store beside it holding exactly what it uses."""
    nb = read_notebook(source)
    roots = store_roots(source, nb)
    dest_store = dest.parent.resolve() / STORE_DIRNAME
    counts = {"inlined": 0, "bundled": 0}
    for _, record in records(nb):
        for name, entry in record.get("writes", {}).items():
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
    nb.metadata.setdefault("nbrewind", {})["store"] = STORE_DIRNAME
    dest.parent.mkdir(parents=True, exist_ok=True)
    write_notebook(nb, dest)
    return counts


@dataclass(frozen=True)
class CellRow:
    index: int
    status: str
    reason: str
    reads: list[str]
    writes: list[str]
    inline_bytes: int
    store_bytes: int
    trust: str


def inspect(path: Path) -> list[CellRow]:
    nb = read_notebook(path)
    try:
        key: Optional[bytes] = load_key()
    except Exception:  # noqa: BLE001 - inspecting needs no key; say "unknown" instead
        key = None
    rows = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        record = cell.metadata.get("nbrewind")
        if not isinstance(record, dict):
            rows.append(CellRow(index, "-", "no record", [], [], 0, 0, "-"))
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
            )
        )
    return rows


def format_table(rows: list[CellRow]) -> str:
    header = ("cell", "status", "trust", "inline", "store", "reads", "writes", "why")
    lines = [header]
    for r in rows:
        lines.append(
            (
                str(r.index),
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


def trust(path: Path) -> dict[str, int]:
    """Sign every record of a reviewed notebook with this user's key, after checking that every
    checkpoint blob it references is present and matches its digest."""
    nb = read_notebook(path)
    key = load_key()
    roots = store_roots(path, nb)
    counts = {"signed": 0, "already": 0}
    for index, record in records(nb):
        if record.get("status") == "error" or "writes" not in record:
            continue
        for name, entry in record["writes"].items():
            if "digest" in entry:
                try:
                    get_blob(entry, roots)
                except BlobError as e:
                    raise NotebookError(
                        f"not trusting {path}: cell {index}, value {name!r}: {e}"
                    ) from None
        if verify(record, key) is Trust.TRUSTED:
            counts["already"] += 1
            continue
        record["sig"] = sign(record, key)
        counts["signed"] += 1
    write_notebook(nb, path)
    return counts
