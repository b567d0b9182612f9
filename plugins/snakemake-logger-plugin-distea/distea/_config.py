"""Snakemake's ``config`` at key level: which keys code reads, and which keys a change changed.

Pure (no process state): :class:`ConfigRecorder` is a ``dict`` subclass that calls a function
with the dotted key path of every read (``model.alpha``); :func:`recording_copy` turns a config
tree into recorders; :func:`flatten` and :func:`changed_keys` compare two versions of a config
file key by key.

A read is named by the path of the value it reveals:

* ``config["model"]["alpha"]``, ``.get``, ``in``, ``setdefault``, ``pop``: ``model.alpha``
  (a nested mapping read this way reveals nothing by itself: its own reads are recorded);
* anything that reveals a whole mapping (iteration, ``keys()``, ``items()``, ``values()``,
  ``len()``, ``==``, ``repr``, ``copy()``, ``dict(m)``, ``{**m}``, ``json.dumps(m)``, which
  call those methods on a ``dict`` subclass): ``model.*`` (every key under ``model``; the
  top-level mapping: ``*``).

A change of key ``K`` reaches a read ``R`` when one is a prefix of the other (``model.alpha``
and ``model.*``, ``model`` and ``model.alpha``). Pickled, a recorder is a plain ``dict``
(a job's ``snakemake`` object travels to its script without the recording function).
"""

import hashlib
import json
from collections.abc import Callable, Iterator
from typing import Any, Optional

WHOLE = "*"

Note = Callable[[str], None]


def child(path: str, key: Any) -> str:
    """The dotted path of ``key`` under ``path`` (non-string keys by their ``repr``)."""
    name = key if isinstance(key, str) else repr(key)
    return f"{path}.{name}" if path else name


def whole(path: str) -> str:
    return f"{path}.{WHOLE}" if path else WHOLE


class ConfigRecorder(dict):  # type: ignore[type-arg]
    """A config mapping that reports reads by key path (see the module docstring)."""

    __slots__ = ("_path", "_note")

    def __init__(self, items: Any = (), path: str = "", note: Optional[Note] = None) -> None:
        super().__init__(items)
        self._path = path
        self._note = note

    def _read(self, key: Any) -> None:
        if self._note is not None:
            self._note(child(self._path, key))

    def _all(self) -> None:
        if self._note is not None:
            self._note(whole(self._path))

    def __getitem__(self, key: Any) -> Any:
        value = dict.__getitem__(self, key)
        if not isinstance(value, ConfigRecorder):
            self._read(key)
        return value

    def get(self, key: Any, default: Any = None) -> Any:
        value = dict.get(self, key, _MISSING)
        if value is _MISSING:
            self._read(key)  # absent: adding it later changes what the code gets
            return default
        if not isinstance(value, ConfigRecorder):
            self._read(key)
        return value

    def __contains__(self, key: Any) -> bool:
        self._read(key)
        return dict.__contains__(self, key)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        self._read(key)
        return dict.setdefault(self, key, default)

    def pop(self, key: Any, *default: Any) -> Any:
        self._read(key)
        return dict.pop(self, key, *default)

    def __iter__(self) -> Iterator[Any]:
        self._all()
        return dict.__iter__(self)

    def keys(self) -> Any:
        self._all()
        return dict.keys(self)

    def items(self) -> Any:
        self._all()
        return dict.items(self)

    def values(self) -> Any:
        self._all()
        return dict.values(self)

    def __len__(self) -> int:
        self._all()
        return dict.__len__(self)

    def __eq__(self, other: Any) -> bool:
        self._all()
        return dict.__eq__(self, other)

    def __ne__(self, other: Any) -> bool:
        self._all()
        return dict.__ne__(self, other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        self._all()
        return dict.__repr__(self)

    def copy(self) -> dict:  # type: ignore[type-arg]
        self._all()
        return plain(self)

    def __reduce__(self) -> Any:
        return (dict, (list(dict.items(self)),))

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        import copy

        self._all()
        return copy.deepcopy(plain(self), memo)


_MISSING = object()


def plain(value: Any) -> Any:
    """A config tree without recorders (plain dicts), reading nothing."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in dict.items(value)}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def recording_copy(value: Any, note: Note, path: str = "") -> Any:
    """``value`` with every mapping in it (nested in mappings) turned into a recorder."""
    if not isinstance(value, dict):
        return value
    items = [(k, recording_copy(v, note, child(path, k))) for k, v in dict.items(value)]
    return ConfigRecorder(items, path, note)


def record_in_place(config: "ConfigRecorder", note: Note) -> None:
    """Nested mappings that code put into a recorder since (``update_config``): recorders too."""
    for key, value in list(dict.items(config)):
        if isinstance(value, ConfigRecorder):
            record_in_place(value, note)
        elif isinstance(value, dict):
            dict.__setitem__(config, key, recording_copy(value, note, child(config._path, key)))


def flatten(value: Any, path: str = "") -> dict[str, str]:
    """Leaf key path -> digest of its value (a mapping's leaves; anything else is a leaf)."""
    if isinstance(value, dict) and value:
        out: dict[str, str] = {}
        for key, item in dict.items(value):
            out.update(flatten(item, child(path, key)))
        return out
    text = json.dumps(plain(value), sort_keys=True, default=repr)
    return {path: hashlib.blake2b(text.encode(), digest_size=8).hexdigest()}


def changed_keys(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """Key paths whose value differs, appeared or disappeared between two flattenings."""
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def reaches(changed: str, read: str) -> bool:
    """Does a change of key path ``changed`` reach a read named ``read``?"""
    if read == WHOLE or changed == read:
        return True
    if read.endswith("." + WHOLE):
        read = read[: -len(WHOLE) - 1]
    return changed == read or changed.startswith(read + ".") or read.startswith(changed + ".")
