"""Atomic JSON and JSONL files: plans, trial records and the history of a search.

Every file appears whole or not at all (written to a temporary file in the same folder, then
``os.replace``d), so a search killed at any moment never leaves a half-written record that a
resumed run would trust.
"""

import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ._errors import StoreError


def write_text_atomic(path: "str | os.PathLike[str]", text: str) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the new one, never half."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_json(path: "str | os.PathLike[str]", obj: Any) -> None:
    """Atomically write one JSON document."""
    write_text_atomic(path, json.dumps(obj, indent=1, sort_keys=True, allow_nan=False) + "\n")


def read_json(path: "str | os.PathLike[str]") -> Any:
    """Read one JSON document, naming the file if it is not valid JSON."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise StoreError(f"{path} is not valid JSON ({e}); delete it to redo that step") from e


def write_jsonl(path: "str | os.PathLike[str]", records: Iterable[Mapping[str, Any]]) -> None:
    """Atomically write records, one JSON object per line."""
    lines = [json.dumps(r, sort_keys=True, allow_nan=False) for r in records]
    write_text_atomic(path, "".join(line + "\n" for line in lines))


def read_jsonl(path: "str | os.PathLike[str]") -> list[dict[str, Any]]:
    """Records of a JSONL file (an absent file has none)."""
    if not os.path.exists(path):
        return []
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise StoreError(f"{path}:{n} is not a JSON record ({e})") from e
    return out
