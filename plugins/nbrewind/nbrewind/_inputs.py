"""Input files a notebook's records name, carried in its store to another site.

A record names the files its cell read with their content digests (``files_read``). ``nbrewind
pack --with-inputs`` copies each of them, content addressed, into the ``.nbrewind/`` store
beside the packed notebook; a repeat at a site that has only the notebook and that store puts
a missing input back at its path (from the store, after checking its digest) before deciding
the cell, so the cell is restored, or re-executed with the same input, instead of counting the
missing file as changed and crashing on it.

Nothing read from a store or a notebook writes outside the working directory: only relative
paths without ``..``, under no symbolic link leading out, are restored, never over an existing
file, and only for records signed with this user's key.
"""

import os
import secrets
from collections.abc import Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ckptstore import CheckpointStore, file_digest
from ckptstore.store import CorruptObjectError, StoreError

from ._record import files_read, input_files, relative_inside

__all__ = [
    "InputError",
    "InputFile",
    "bundle",
    "named_inputs",
    "notebook_inputs",
    "relative_inside",
    "restore_missing",
]


@dataclass(frozen=True)
class InputFile:
    """A file a cell read: its path as the record names it, and its content digest then."""

    path: str
    digest: str
    cell: int


def named_inputs(record: Mapping[str, Any]) -> dict[str, str]:
    """Path -> digest of every file a record says its cell read (a file recorded as absent,
    digest None, is not one)."""
    return {p: d for p, d in files_read(record).items() if d is not None}


def notebook_inputs(cells: Sequence[tuple[int, Mapping[str, Any]]]) -> Iterator[InputFile]:
    """The notebook's input files, from its (cell index, record) pairs in order: the record
    owner's :func:`~nbrewind._record.input_files` (read before any cell wrote or deleted
    them), each with the first cell that read it."""
    cells = list(cells)
    for path, digest in input_files(record for _, record in cells).items():
        cell = next(i for i, record in cells if files_read(record).get(path) == digest)
        yield InputFile(path, digest, cell)


class InputError(Exception):
    """An input file cannot be bundled (missing, or changed since the cell read it)."""


def bundle(inputs: Sequence[InputFile], base: Path, store_root: Path) -> tuple[int, list[str]]:
    """Copy every relative input (found under ``base``, where the notebook ran) into the store.
    Returns how many were bundled and the absolute paths left out (they name the machine)."""
    store = CheckpointStore(store_root)
    bundled = 0
    skipped: list[str] = []
    for item in inputs:
        rel = relative_inside(item.path)
        if rel is None:
            skipped.append(item.path)
            continue
        source = base / rel
        if not source.is_file():
            raise InputError(
                f"input {item.path!r} of cell {item.cell} is not at {source}: pack from the "
                "directory the notebook ran in (--cwd DIR)"
            )
        now = file_digest(source)
        if now != item.digest:
            raise InputError(
                f"input {item.path!r} changed since cell {item.cell} read it ({item.digest} "
                f"then, {now} now): repeat the notebook first, then pack it"
            )
        if store.put_file(source) != item.digest:
            raise InputError(f"input {item.path!r} changed while it was being bundled")
        bundled += 1
    return bundled, skipped


def _inside(base: Path, target: Path) -> bool:
    """``target``'s existing ancestors resolve inside ``base`` (no symlink leads out)."""
    root = base.resolve()
    probe = target.parent
    while not probe.exists():
        probe = probe.parent
    resolved = probe.resolve()
    return resolved == root or root in resolved.parents


def restore_missing(
    record: Mapping[str, Any],
    base: Path,
    store_roots: Sequence[Path],
    produced: AbstractSet[str] = frozenset(),
) -> list[tuple[str, str]]:
    """Put back, under ``base``, the inputs of a (trusted) record that are missing there and
    that a store holds; return the (path, digest) pairs restored. Files in ``produced`` (written
    by an earlier cell of the notebook) are not inputs: whether they exist is that cell's
    doing, as in a fresh run."""
    restored = []
    for path, digest in named_inputs(record).items():
        if path in produced:
            continue
        rel = relative_inside(path)
        if rel is None:
            continue
        target = base / rel
        if os.path.lexists(target) or not _inside(base, target):
            continue
        if _copy_out(digest, store_roots, target):
            restored.append((path, digest))
    return restored


def _copy_out(digest: str, store_roots: Sequence[Path], target: Path) -> bool:
    for root in store_roots:
        try:
            store = CheckpointStore(root, create=False)
            if not store.has(digest):
                continue
        except (StoreError, ValueError, OSError):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.nbrewind-{secrets.token_hex(4)}")
        try:
            store.copy_out(digest, tmp)  # re-hashes: a damaged object is never put back
            os.link(tmp, target)  # never replaces a file that appeared meanwhile
        except (CorruptObjectError, FileExistsError, OSError):
            continue
        finally:
            tmp.unlink(missing_ok=True)
        return True
    return False
