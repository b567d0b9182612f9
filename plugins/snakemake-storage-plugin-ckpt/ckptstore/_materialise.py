"""How a job's outputs become manifest entries, and how entries become outputs again.

This module owns the on-disk kinds of a checkpointed output. An entry is one of::

    {"file": DIGEST, "mode": 0o644}                  a regular file (mode: permission bits)
    {"link": TARGET}                                 a symbolic link, its target kept verbatim
    {"tree": {REL: DIGEST}, "links": {REL: TARGET},  a directory() output: its files, its
     "dirs": [REL, ...], "modes": {REL: MODE}}       links, every subdirectory (so empty ones
                                                     come back), the modes of all ("." = root)

``mode``, ``links``, ``dirs`` and ``modes`` are optional (manifests written before they existed
restore as before: files and the directories that hold them). Objects are read through a
callback that re-hashes them (:meth:`CheckpointStore.copy_out`).

Placing follows what a fresh run leaves: Snakemake removes an output before its job runs, so
whatever stands at an output's path (a file, a directory, a symbolic link to either) is
replaced by the restored output itself, never written through. Everything is staged first
beside its target (``.NAME.ckpt-XXXXXXXX``) and renamed into place only when every output of
the job is staged; stages and set-aside old outputs are removed on every path out, including
a failure half-way, and a stage a killed process left behind is removed by the next restore of
that output.
"""

import os
import re
import secrets
import shutil
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

STAGE_MARK = ".ckpt-"
_STAGE_NAME = re.compile(r"^\.(?P<name>.+)\.ckpt-(?:old-)?[0-9a-f]{8}$")


class UnstorableOutputError(OSError):
    """An output holds something a checkpoint cannot hold (a FIFO, a socket, a device)."""


class UnsafeEntryError(OSError):
    """A directory entry's name would lead outside its directory: nothing is placed."""


def snapshot(full: Path, put_file: Callable[[Path], str]) -> dict[str, Any]:
    """The entry describing the output at ``full`` (its files' contents stored by
    ``put_file``, which returns their digests)."""
    if full.is_symlink():
        return {"link": os.readlink(full)}
    st = full.stat()
    if stat.S_ISREG(st.st_mode):
        return {"file": put_file(full), "mode": _mode(st.st_mode)}
    if not stat.S_ISDIR(st.st_mode):
        raise UnstorableOutputError(f"{full} is neither a file, a directory nor a link")
    tree: dict[str, str] = {}
    links: dict[str, str] = {}
    dirs: list[str] = []
    modes: dict[str, int] = {".": _mode(st.st_mode)}
    for root, subdirs, files in os.walk(full):
        base = Path(root)
        for name in sorted(subdirs + files):
            path = base / name
            rel = path.relative_to(full).as_posix()
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                links[rel] = os.readlink(path)
            elif stat.S_ISDIR(info.st_mode):
                dirs.append(rel)
                modes[rel] = _mode(info.st_mode)
            elif stat.S_ISREG(info.st_mode):
                tree[rel] = put_file(path)
                modes[rel] = _mode(info.st_mode)
            else:
                raise UnstorableOutputError(f"{path} is neither a file, a directory nor a link")
    return {"tree": tree, "links": links, "dirs": dirs, "modes": modes}


KEPT_MODE_BITS = 0o1777
"""The permission bits an entry keeps (rwx for all, and the sticky bit): set-user- and
set-group-ID bits (a set-group-ID folder on a shared file system) are not stored, as a
manifest carrying them is refused (:func:`ckptstore._records.check_entry`)."""


def _mode(st_mode: int) -> int:
    return stat.S_IMODE(st_mode) & KEPT_MODE_BITS


def kept_mode(st_mode: int) -> int:
    """The permission bits a checkpoint keeps of a file's ``st_mode`` (and a restore puts
    back): no set-user- or set-group-ID bits."""
    return _mode(st_mode)


def entry_digests(entry: dict[str, Any]) -> set[str]:
    """The objects an entry needs (a link needs none)."""
    if "file" in entry:
        return {entry["file"]}
    if "tree" in entry:
        return set(entry["tree"].values())
    return set()


def stage_path(target: Path) -> Path:
    """A fresh staging name beside ``target`` (same directory: same file system)."""
    return target.with_name(f".{target.name}{STAGE_MARK}{secrets.token_hex(4)}")


class StaleStages:
    """What killed restores left in each folder, listed once per folder (a listing per
    restored output made restoring N outputs of one folder take N listings of N files), and
    removed as their targets are restored. Stages left after the first listing of a folder
    (a run killed meanwhile) wait for the next restore of that output by another instance."""

    def __init__(self) -> None:
        self._folders: dict[Path, dict[str, list[Path]]] = {}

    def clear(self, target: Path) -> None:
        found = self._folders.get(target.parent)
        if found is None:
            found = self._folders[target.parent] = {}
            try:
                siblings = list(target.parent.iterdir())
            except OSError:
                siblings = []
            for path in siblings:
                m = _STAGE_NAME.match(path.name)
                if m:
                    found.setdefault(m.group("name"), []).append(path)
        for path in found.pop(target.name, []):
            remove(path)


def build(entry: dict[str, Any], stage: Path, copy_out: Callable[[str, Path], None]) -> None:
    """Create the output an entry describes at ``stage`` (which must not exist)."""
    if "link" in entry:
        os.symlink(entry["link"], stage)
        return
    if "file" in entry:
        copy_out(entry["file"], stage)
        if "mode" in entry:
            os.chmod(stage, int(entry["mode"]))
        return
    dirs, tree, links = entry.get("dirs", []), entry["tree"], entry.get("links", {})
    for rel in [*dirs, *tree, *links]:
        _check_inside(rel)
    stage.mkdir()
    for rel in dirs:
        (stage / rel).mkdir(parents=True, exist_ok=True)
    for rel, digest in tree.items():
        (stage / rel).parent.mkdir(parents=True, exist_ok=True)
        copy_out(digest, stage / rel)
    # Links last: a link named like a folder that holds files fails here (it exists), so
    # nothing is ever written through a restored link.
    for rel, link_target in links.items():
        (stage / rel).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(link_target, stage / rel)
    # Modes of what was created as a file or folder only, deepest first (a folder made
    # read-only would refuse what goes inside).
    modes = {r: m for r, m in entry.get("modes", {}).items() if r == "." or r in tree or r in dirs}
    for rel in sorted(modes, key=lambda r: -(r.count("/") + (r != "."))):
        os.chmod(stage if rel == "." else stage / rel, int(modes[rel]), follow_symlinks=False)


def _check_inside(rel: str) -> None:
    parts = Path(rel).parts
    if not parts or Path(rel).is_absolute() or any(p in ("..", ".") for p in parts):
        raise UnsafeEntryError(f"directory entry {rel!r} is not a plain relative name")


def place(staged: list[tuple[Path, Path]]) -> None:
    """Rename every stage onto its target. Whatever stands at a target is replaced as a
    whole: a directory, or a symbolic link (never followed), is set aside first and removed
    once the new output is in place."""
    for stage, target in staged:
        if os.path.lexists(target) and (_is_real_dir(target) or _is_real_dir(stage)):
            aside = target.with_name(f".{target.name}.ckpt-old-{secrets.token_hex(4)}")
            os.rename(target, aside)
            try:
                os.rename(stage, target)
            except BaseException:
                os.rename(aside, target)  # put the old output back: nothing half-placed
                raise
            remove(aside)
        else:
            os.replace(stage, target)


def remove(path: Path) -> None:
    """Remove a file, link or directory tree, read-only directories included."""
    if _is_real_dir(path):
        shutil.rmtree(path, onerror=_make_writable_and_retry)
    else:
        try:
            path.unlink()
        except FileNotFoundError:
            pass


def _is_real_dir(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def _make_writable_and_retry(func: Callable[..., Any], path: str, _exc: Any) -> None:
    parent = os.path.dirname(path)
    try:
        os.chmod(parent, stat.S_IMODE(os.lstat(parent).st_mode) | stat.S_IRWXU)
        if os.path.isdir(path) and not os.path.islink(path):
            os.chmod(path, stat.S_IMODE(os.lstat(path).st_mode) | stat.S_IRWXU)
        func(path)
    except FileNotFoundError:
        pass
