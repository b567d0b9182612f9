"""The cell record (``metadata.nbrewind`` of a code cell): its format version and what it names.

One owner for the format: the kernel fills a record, the engine signs and completes it, and
other commands (pack, trust, inspect) read it through the functions here.

Format 3 (this version) holds, besides ``source``, ``outputs``, ``packages``, ``python``,
``sig``, ``status`` and ``reason``:

- ``reads``: name -> hash of the value read, when the code first reached it: the cell's own
  code, and every notebook function, method or lambda that ran during the cell (each one
  reports the globals it may read when it starts). Pseudo-names ``<random>``, ``<numpy.random>`` and
  ``<torch>`` are the global random generators (hash ``rng:initial`` when no cell had set it).
- ``writes``: name -> ``{kind, hash, type, size, digest, inline | object}``; ``kind`` is
  ``pickle``, ``cloudpickle``, ``module``, ``rng`` (a generator's state) or ``unpicklable``.
  Names whose values share objects carry ``group`` (the sorted names): their blob is one
  pickled ``{name: value}`` dict, the same for every member, so restoring keeps identity.
- ``files_read``: path -> sha256 of the content the cell read (None: it did not exist), as seen
  by the kernel's audit hook at the first ``open`` (relative to the working directory when
  inside it, that is the kernel's starting directory); ``dirs_read``: directory -> hash of
  its entry names (``glob``, ``listdir``); ``stats_read``: path -> what a stat call without an
  open saw (``os.path.exists``, ``getsize``, ``Path.is_file``: ``file:<size>``, ``dir`` or
  None).
- ``files_written``: path -> sha256 after the cell (None: deleted). Files up to 64 MiB are kept
  in the store under that digest, so a restored cell puts them back.
- ``unknowable``: why the kernel could not observe the cell fully (processes, threads); such a
  cell is always re-executed.
- ``wide``: the cell's code reached a builtin that reads the whole namespace (``dir()``,
  ``globals()``, ``eval``); such a cell is always re-executed.
- ``effects``: ``{replay, other}``: what the cell changed in the process outside its variables
  (:mod:`nbrewind._effects`); ``replay`` (environment, working directory, ``sys.path``) is
  replayed when the cell is restored, any ``other`` makes it re-execute.
- ``loaded``: restored values (of earlier cells) its code reached and the kernel loaded.

Records of formats 1 and 2 (before run-time reads and process effects) are not restored:
their cells run once more and get format 3 records.
"""

from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath
from typing import Any, Optional

FORMAT_VERSION = 3


def _paths(field: Any) -> dict[str, Optional[str]]:
    """A path -> digest field, keeping only well-formed entries (a record may come from
    anywhere: pack and trust read unsigned ones)."""
    if not isinstance(field, Mapping):
        return {}
    return {
        p: d for p, d in field.items() if isinstance(p, str) and (d is None or isinstance(d, str))
    }


def files_read(record: Mapping[str, Any]) -> dict[str, Optional[str]]:
    """The files a cell read, with the digest of the content it read (None: it did not exist)."""
    return _paths(record.get("files_read"))


def files_written(record: Mapping[str, Any]) -> dict[str, Optional[str]]:
    """The files a cell wrote, with their digest after it (None: it deleted the file)."""
    return _paths(record.get("files_written"))


def input_files(records: Iterable[Optional[Mapping[str, Any]]]) -> dict[str, str]:
    """The notebook's input files: those its cells read (in order) that no earlier cell wrote,
    with the digest of the content read. What a site needs to have (or a bundle to carry)."""
    written: set[str] = set()
    inputs: dict[str, str] = {}
    for record in records:
        if not record:
            continue
        for path, digest in files_read(record).items():
            if path not in written and digest is not None:
                inputs.setdefault(path, digest)
        written |= set(files_written(record))
    return inputs


def relative_inside(path: str) -> Optional[PurePosixPath]:
    """A path a record names as a relative path that stays inside the working directory (the
    only paths repeat writes: restored inputs and written files), else None (absolute paths,
    outside the working directory when recorded; ``..``; empty)."""
    if not path or "\x00" in path or "\\" in path:
        return None
    p = PurePosixPath(path)
    if p.is_absolute() or any(part in ("..", "") for part in p.parts) or not p.parts:
        return None
    return PurePosixPath(*[part for part in p.parts if part != "."]) if p.parts else None


def value_entries(record: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Write entries that have checkpoint bytes (``digest`` plus ``inline`` or ``object``)."""
    return {n: e for n, e in (record.get("writes") or {}).items() if "digest" in e}
