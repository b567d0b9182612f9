"""Where checkpoint bytes live: inline in the notebook (small) or in a content-addressed store.

Large blobs go to a :class:`ckptstore.CheckpointStore` (the same store format as
checkpoint-aware rule skipping), by default ``.nbrewind/`` beside the notebook; records name
them by sha256 only, so a notebook and its store can move together to another directory or
site, and ``nbrewind pack`` can inline them. Every read re-hashes the bytes: a truncated or
altered object is never handed to the unpickler.
"""

import base64
import hashlib
import os
import secrets
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional

from ckptstore import CheckpointStore, StoreError

DEFAULT_INLINE_MAX = 64 * 1024
STORE_DIRNAME = ".nbrewind"


class BlobError(Exception):
    """A checkpoint blob is missing or does not match its digest."""


def inline_max() -> int:
    return int(os.environ.get("NBREWIND_INLINE_MAX", DEFAULT_INLINE_MAX))


def put_blob(blob: bytes, digest: str, store_root: Path, limit: int) -> dict[str, Any]:
    """Keep ``blob`` inline if small, else in the store; return the record fields."""
    if len(blob) <= limit:
        return {"inline": base64.b64encode(blob).decode("ascii")}
    store = _open(store_root, create=True)
    assert store is not None
    if not store.has(digest):
        stored = store.put_bytes(blob)
        if stored != digest:
            raise BlobError(f"store {store_root} hashed a blob as {stored}, expected {digest}")
    return {"object": digest}


def put_file(path: Path, digest: str, store_root: Path) -> None:
    """Keep a copy of a file a cell wrote in the store, under its content digest."""
    store = _open(store_root, create=True)
    assert store is not None
    if store.has(digest):
        return
    stored = store.put_file(path)
    if stored != digest:
        raise BlobError(f"{path} changed while it was being kept ({stored} != {digest})")


def has_object(digest: str, store_roots: Sequence[Path]) -> bool:
    return any(_held(root, digest) is not None for root in store_roots)


def restore_file(digest: str, store_roots: Sequence[Path], dest: Path) -> bool:
    """Write a kept file back (atomically), after checking its bytes; False if not kept."""
    for root in store_roots:
        path = _held(root, digest)
        if path is None:
            continue
        blob = path.read_bytes()
        if "sha256:" + hashlib.sha256(blob).hexdigest() != digest:
            continue
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(f".{dest.name}.nbrewind-{secrets.token_hex(4)}")
        try:
            tmp.write_bytes(blob)
            os.replace(tmp, dest)
        finally:
            tmp.unlink(missing_ok=True)
        return True
    return False


def get_blob(entry: dict[str, Any], store_roots: Sequence[Path]) -> bytes:
    """The verified bytes of a write entry (``inline`` or ``object``)."""
    digest = entry["digest"]
    if "inline" in entry:
        blob = base64.b64decode(entry["inline"])
    else:
        blob = _read_object(digest, store_roots)
    if "sha256:" + hashlib.sha256(blob).hexdigest() != digest:
        raise BlobError(f"checkpoint bytes do not match their digest {digest}: altered; not loaded")
    return blob


def copy_into(digest: str, store_roots: Sequence[Path], target_root: Path) -> None:
    """Make ``target_root`` hold an object found in one of ``store_roots`` (so the notebook a
    run writes finds every checkpoint it references in its own store)."""
    target = _open(target_root, create=True)
    assert target is not None
    if target.has(digest):
        return
    for root in store_roots:
        path = _held(root, digest)
        if root != target_root and path is not None:
            if target.put_file(path) != digest:
                raise BlobError(f"checkpoint object {digest} in {root} does not match its name")
            return


_OPENED: dict[Path, CheckpointStore] = {}


def _open(root: Path, create: bool = False) -> Optional[CheckpointStore]:
    """The store at ``root`` (opened once per process); None if there is none and
    ``create`` is false. Its paths are ckptstore's business: only its API is used here."""
    key = Path(root).resolve()
    if key not in _OPENED:
        try:
            _OPENED[key] = CheckpointStore(key, create=create)
        except StoreError:
            if create:
                raise
            return None
    return _OPENED[key]


def _held(root: Path, digest: str) -> Optional[Path]:
    """The file in which the store at ``root`` holds ``digest``; None if it holds none (or
    ``root`` is no store, or ``digest`` no sha256 digest)."""
    store = _open(root)
    if store is None or not store.has(digest):
        return None
    return store.object_path(digest)


def pin_records(store_root: Path, owner: str, records: Any) -> int:
    """Pin, for ``owner`` (a notebook's path), every object of ``store_root`` the notebook's
    cell records refer to, so ``python -m ckptstore gc`` never deletes a live checkpoint; the
    notebook's previous pin is replaced. Returns how many objects are pinned."""
    store = _open(store_root)
    if store is None or store.read_only:
        return 0
    found: set[str] = set()
    pending = [records]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
        elif isinstance(item, str) and item.startswith("sha256:") and store.has(item):
            found.add(item)
    store.pin(owner, found)
    return len(found)


def _read_object(digest: str, store_roots: Sequence[Path]) -> bytes:
    for root in store_roots:
        path = _held(root, digest)
        if path is not None:
            return path.read_bytes()
    searched = ", ".join(str(r) for r in store_roots) or "(no store)"
    raise BlobError(
        f"checkpoint object {digest} is not in any store searched ({searched}); copy the "
        "notebook's .nbrewind/ store along, set NBREWIND_STORE, or use `nbrewind pack`"
    )
