"""The cell record (``metadata.nbrewind`` of a code cell): its format version and what it names.

One owner for the format: the kernel fills a record, the engine signs and completes it, and
other commands (pack, trust, inspect) read it through the functions here.

Format 2 (this version) holds, besides ``source``, ``outputs``, ``packages``, ``python``,
``sig``, ``status`` and ``reason``:

- ``reads``: name -> hash of the value read. Pseudo-names ``<random>``, ``<numpy.random>`` and
  ``<torch>`` are the global random generators (hash ``rng:initial`` when no cell had set it).
- ``writes``: name -> ``{kind, hash, type, size, digest, inline | object}``; ``kind`` is
  ``pickle``, ``cloudpickle``, ``module``, ``rng`` (a generator's state) or ``unpicklable``.
  Names whose values share objects carry ``group`` (the sorted names): their blob is one
  pickled ``{name: value}`` dict, the same for every member, so restoring keeps identity.
- ``files_read``: path -> sha256 of the content the cell read (None: it did not exist), as seen
  by the kernel's audit hook at the first ``open`` (relative to the working directory when
  inside it); ``dirs_read``: directory -> hash of its entry names (``glob``, ``listdir``).
- ``files_written``: path -> sha256 after the cell (None: deleted). Files up to 64 MiB are kept
  in the store under that digest, so a restored cell puts them back.
- ``unknowable``: why the kernel could not observe the cell fully (processes, threads); such a
  cell is always re-executed.

Format 1 records (before run-time file and RNG observation) are not restored: their cells run.
"""

from collections.abc import Iterable, Mapping
from typing import Any, Optional

FORMAT_VERSION = 2


def files_read(record: Mapping[str, Any]) -> dict[str, Optional[str]]:
    """The files a cell read, with the digest of the content it read."""
    return dict(record.get("files_read") or {})


def files_written(record: Mapping[str, Any]) -> dict[str, Optional[str]]:
    """The files a cell wrote, with their digest after it (None: it deleted the file)."""
    return dict(record.get("files_written") or {})


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


def value_entries(record: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Write entries that have checkpoint bytes (``digest`` plus ``inline`` or ``object``)."""
    return {n: e for n, e in (record.get("writes") or {}).items() if "digest" in e}
