"""The cell record (``metadata.nbrewind`` of a code cell): its format version and what it names.

One owner for the format: the kernel fills a record, the engine signs and completes it, and
other commands (pack, trust, inspect) read it through the functions here.

Format 4 (this version) holds, besides ``source``, ``outputs``, ``packages``, ``python``,
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
  (:mod:`nbrewind._effects`); ``replay`` (environment, working directory, ``sys.path``,
  warning filters, matplotlib parameters, pyplot's open figures: ``matplotlib figures`` is
  ``{open: [[number, entry]], closed, active}``, each entry a checkpoint of kind ``figure``)
  is replayed when the cell is restored, any ``other`` makes it re-execute.
- ``state``: the process state the cell started in, as the chain of the cells before it that
  changed process state (:func:`state_after`); a cell is restored only in the state it was
  recorded in.
- ``loaded``: restored values (of earlier cells) its code reached and the kernel loaded.

Records of formats 1 to 3 (before run-time reads, process effects and the state chain) are
not restored: their cells run once more and get format 4 records.
"""

import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import PurePosixPath
from typing import Any, Optional

FORMAT_VERSION = 4


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


STATE_START = "start"
"""The state chain of a fresh kernel, before its first cell."""
_INPUTS = ("source", "reads", "files_read", "dirs_read", "env_read", "stats_read")


def mask_addresses(text: str) -> str:
    """``text`` with object addresses (``0x7f...``) masked: they differ from run to run."""
    return re.sub(r"0x[0-9a-fA-F]+", "0x?", text)


def state_after(state: str, record: Mapping[str, Any]) -> str:
    """The state chain after a cell that started in ``state``. A cell that changed nothing in
    the process outside its variables (or only the environment, whose reads are compared name
    by name) leaves it as it was; one that did (a library option, a figure, a module's state,
    warning filters, the working directory...) extends it by what determines that change: its
    source, the values, files and variables it read, and what a replay would set. Two runs
    whose chains agree reached the cell through the same state-changing cells with the same
    inputs. A cell whose reads are not known (magics, ``globals()``, processes) extends it by
    the changes it was seen to make, too."""
    effects = record.get("effects") or {}
    replay = {k: v for k, v in (effects.get("replay") or {}).items() if k != "environ"}
    other = list(effects.get("other") or [])
    if not replay and not other:
        return state
    figures = replay.get("matplotlib figures")
    if isinstance(figures, dict):  # the figures by content, wherever their bytes are kept
        opened = [[item[0], item[1].get("digest")] for item in figures.get("open", [])]
        replay["matplotlib figures"] = dict(figures, open=opened)
    seen = None
    if record.get("opaque") or record.get("wide") or record.get("unknowable"):
        seen = [mask_addresses(phrase) for phrase in other]
    payload = [state, {k: record.get(k) for k in _INPUTS}, replay, bool(other), seen]
    text = json.dumps(payload, sort_keys=True, default=repr)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def checkpoints(record: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every checkpoint entry of a record, named: its values (``writes``) and the figures its
    effects left open (``effects.replay["matplotlib figures"]``, named ``figure N``)."""
    found = [
        (name, entry)
        for name, entry in (record.get("writes") or {}).items()
        if isinstance(entry, dict)
    ]
    figures = ((record.get("effects") or {}).get("replay") or {}).get("matplotlib figures")
    for item in (figures or {}).get("open", []) if isinstance(figures, dict) else []:
        if isinstance(item, list) and len(item) == 2 and isinstance(item[1], dict):
            found.append((f"figure {item[0]}", item[1]))
    return found


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
