"""Copy a name's content out of the store into a local path: verified, all or nothing."""

import os
import secrets
import shutil
from pathlib import Path

from snakemake_interface_common.exceptions import WorkflowError

from ckptstore import CheckpointStore, CorruptObjectError, NameRecord


def place(store: CheckpointStore, record: NameRecord, dest: Path, query: str) -> None:
    """Put ``record``'s content at ``dest``, replacing what is there, only once all is verified.

    Everything is copied to a hidden staging name beside ``dest`` and re-hashed on the way;
    only then is it renamed over ``dest``. A corrupt object is set aside by the store and
    reported naming the query and the object; a missing one is reported too. Either way the
    staging copy is removed and ``dest`` is left as it was: never a partial or wrong file.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    stage = dest.with_name(f".{dest.name}.ckpt-{secrets.token_hex(4)}")
    try:
        if record.is_tree:
            stage.mkdir()
            for rel, digest in record.entry["tree"].items():
                (stage / rel).parent.mkdir(parents=True, exist_ok=True)
                _copy(store, digest, stage / rel, query)
        else:
            _copy(store, record.entry["file"], stage, query)
        # The local copy carries the store time, as if copied with its mtime (rsync -t):
        # Snakemake compares it with the storage mtime to decide whether to retrieve again.
        os.utime(stage, (record.stored, record.stored))
    except BaseException:
        _remove(stage)
        raise
    if dest.is_dir() and not dest.is_symlink():
        shutil.rmtree(dest)
    elif dest.is_symlink():
        dest.unlink()
    os.replace(stage, dest)


def _copy(store: CheckpointStore, digest: str, target: Path, query: str) -> None:
    try:
        store.copy_out(digest, target)
    except CorruptObjectError as e:
        raise WorkflowError(
            f"{query}: its stored object {digest} is corrupt (truncated or altered); it was "
            f"moved to {store.root / 'corrupt'} and nothing was placed at the local path. "
            "The name now counts as missing: rerun the workflow to produce it again."
        ) from e
    except FileNotFoundError as e:
        if store.has(digest):
            raise  # the local side is the problem: let its own error speak
        raise WorkflowError(
            f"{query}: its stored object {digest} is missing from {store.root / 'objects'} "
            "(removed by hand, or set aside as corrupt); rerun the workflow to produce it again."
        ) from e


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
