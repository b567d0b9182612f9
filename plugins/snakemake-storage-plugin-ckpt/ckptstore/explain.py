"""Why a job reran: the provenance components that differ between two of its keys.

Each checkpoint keeps the named components its key was computed from (``rule``,
``script:scripts/train.py``, ``params:alpha``, ``input:data/x.csv``, ``config:epochs``, ...),
and the store remembers each job's past keys. Comparing two component sets names exactly what
changed, in the words a user would use."""

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Optional

from .store import CheckpointStore


def explain_change(old: dict[str, str], new: dict[str, str]) -> list[str]:
    """Human-readable reasons why two sets of components give different keys."""
    reasons = []
    for name in sorted(set(old) | set(new)):
        if name not in old:
            reasons.append(f"{name} is new")
        elif name not in new:
            reasons.append(f"{name} is gone")
        elif old[name] != new[name]:
            reasons.append(f"{name} changed")
    return reasons


@dataclass(frozen=True)
class Explanation:
    """Why the job that makes ``outputs`` last got a new key (or that it never did)."""

    rule: str
    outputs: list[str]
    reasons: list[str]
    keys: list[str]

    def render(self) -> str:
        head = f"rule {self.rule} ({', '.join(self.outputs)})"
        if len(self.keys) < 2:
            return f"{head}: stored once ({self.keys[0][:12]}); it has not rerun since"
        why = "; ".join(self.reasons) if self.reasons else "components not recorded"
        return f"{head}: reran ({self.keys[1][:12]} -> {self.keys[0][:12]}): {why}"


def explain_outputs(
    store: CheckpointStore, outputs: Optional[list[str]] = None
) -> Iterator[Explanation]:
    """Explain the last rerun of every remembered job making one of ``outputs`` (all if None).

    ``outputs`` are paths relative to the workflow's working directory, as Snakemake shows
    them."""
    wanted = set(outputs) if outputs else None
    for identity, keys in store.identities():
        try:
            rule, paths = json.loads(identity)
            if not isinstance(rule, str) or not all(isinstance(p, str) for p in paths):
                raise TypeError
        except (ValueError, TypeError):
            store.problems.append(f"index entry {identity[:60]!r} names no rule and outputs")
            continue
        if wanted is not None and wanted.isdisjoint(paths):
            continue
        reasons: list[str] = []
        if len(keys) >= 2:
            new, old = store.lookup_unverified(keys[0]), store.lookup_unverified(keys[1])
            if new is not None and old is not None:
                reasons = explain_change(
                    old.meta.get("components", {}), new.meta.get("components", {})
                )
        yield Explanation(rule, paths, reasons, keys)
