"""The repeat decision for one cell: restore it from its checkpoint, or re-execute it, and why.

Pure: the engine gathers the facts (the cell's record, what the namespace holds now, file
digests, trust), this module applies the policy. A cell is restored only when all hold:

- it has a complete, trusted record whose checkpoints are all present;
- its source is unchanged, and it is not opaque (magics, ``exec``) or a workflow cell;
- every name it read has, now, the value (hash) it had when the record was made; every file it
  read has the same content; the packages its values come from have the same versions;
- the process state it starts in (library options, pyplot's figures, modules' state) comes
  from the same state-changing cells with the same inputs as when it was recorded;
- no later cell needs a value of it that could not be checkpointed.

This is a data-flow criterion, not a prefix: an edit in cell 3 re-executes exactly the cells
whose inputs then come out different, and a re-executed cell whose outputs come out
byte-identical does not invalidate its readers (early cutoff).
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Optional

from ._observe import environment_reads_now
from ._record import FORMAT_VERSION, relative_inside
from ._signing import Trust

RESTORE = "restore"
RUN = "run"
ANY_NAME = "*"
"""In ``needed_later``: a later cell may read any name (it is opaque)."""


@dataclass(frozen=True)
class Decision:
    """``action`` is RESTORE or RUN. ``structural`` marks cells re-executed because of what
    they are (papermill's parameters, workflow and opaque cells, unpicklable values), not
    because something they depend on changed."""

    action: str
    reason: str
    structural: bool = False


@dataclass(frozen=True)
class CellFacts:
    """What the engine knows about a cell when it reaches it."""

    record: Optional[Mapping[str, Any]]
    source_hash: str
    opaque: bool
    workflow: bool
    trust: Trust
    outputs_digest: str
    blobs_present: bool
    needed_later: frozenset[str]
    injected_parameters: bool = False
    unrestorable_file: Optional[str] = None
    """A file the cell wrote that is neither on disk as it wrote it nor kept in the store."""
    wide: str = ""
    """Its code reached a builtin that reads the whole namespace (seen when it ran)."""
    history_reader: str = ""
    """A cell of the notebook (named) reads IPython's output history, which only a kernel
    that ran every cell before it holds: then no cell is restored."""
    state: Optional[str] = None
    """The state chain the cell would start in now (:func:`nbrewind._record.state_after`)."""
    state_why: str = ""
    """Why that chain is not the recorded one, as far as the engine can tell."""


def decide(
    facts: CellFacts,
    current: Mapping[str, str],
    changed_by: Mapping[str, str],
    file_digest_now: Callable[[str], Optional[str]],
    env: Mapping[str, Any],
    listing_now: Optional[Callable[[str], Optional[str]]] = None,
    stat_now: Optional[Callable[[str], Optional[str]]] = None,
    environ_now: Optional[Mapping[str, str]] = None,
) -> Decision:
    """Restore or re-execute a cell under repeat, with the reason (shown to the user)."""
    rec = facts.record
    if facts.injected_parameters:
        return Decision(RUN, "papermill parameters: always executed", structural=True)
    if facts.history_reader:
        return Decision(
            RUN,
            f"{facts.history_reader} reads IPython's output history (_, Out, In), which only a "
            "kernel that ran every cell holds: every cell runs, as in a fresh kernel",
            structural=True,
        )
    if not rec or "writes" not in rec:
        return Decision(RUN, "no checkpoint for this cell")
    if rec.get("status") == "error":
        return Decision(RUN, "it failed last time: no checkpoint")
    if rec.get("source") != facts.source_hash:
        return Decision(RUN, "its source changed")
    if rec.get("v") != FORMAT_VERSION:
        return Decision(
            RUN,
            f"recorded in format v{rec.get('v')} (this nbrewind writes v{FORMAT_VERSION}, which "
            "records reads as they happen, process effects and the state each cell starts in): "
            "re-executed",
        )
    python_now = ".".join(str(env.get("python", "")).split(".")[:2])
    if rec.get("python") != python_now:
        return Decision(
            RUN,
            f"environment changed: Python {rec.get('python')} -> {python_now}; checkpoints "
            "from another Python version are not loaded",
        )
    packages = env.get("packages", {})
    for dist, version in sorted(rec.get("packages", {}).items()):
        if packages.get(dist) != version:
            return Decision(
                RUN,
                f"environment changed: {dist} {version} -> {packages.get(dist, 'not installed')}",
            )
    if facts.workflow:
        return Decision(
            RUN,
            "runs a Snakemake workflow: re-executed; its jobs restore from the workflow's "
            "checkpoint store when unchanged",
            structural=True,
        )
    if facts.opaque:
        return Decision(
            RUN, "uses magics or exec/eval: what it reads cannot be known", structural=True
        )
    if facts.wide:
        return Decision(RUN, f"it {facts.wide}: what it reads cannot be known", structural=True)
    other = (rec.get("effects") or {}).get("other") or []
    if other:
        more = f" and {len(other) - 2} more" if len(other) > 2 else ""
        return Decision(
            RUN,
            "it changes process state that a record cannot replay ("
            + "; ".join(other[:2])
            + more
            + "): re-executed, as a fresh run would",
            structural=True,
        )
    if rec.get("unknowable"):
        return Decision(
            RUN, f"the kernel cannot know what it did: it {rec['unknowable']}", structural=True
        )
    if facts.trust is Trust.TAMPERED:
        return Decision(RUN, "checkpoint TAMPERED (signature does not match): never loaded")
    if facts.trust is Trust.OTHER_KEY:
        return Decision(
            RUN, "checkpoint signed by another key: not loaded (review it, then `nbrewind trust`)"
        )
    if facts.trust is Trust.UNSIGNED:
        return Decision(RUN, "checkpoint unsigned: not loaded (review it, then `nbrewind trust`)")
    if facts.state is not None and rec.get("state") != facts.state:
        why = facts.state_why or "the cells before it that change it are not the recorded ones"
        return Decision(
            RUN,
            "it would start from other process state (library options, figures, module state) "
            f"than when it was recorded: {why}; re-executed, as a fresh run would",
        )
    for name, digest in sorted(rec.get("reads", {}).items()):
        if current.get(name) != digest:
            why = changed_by.get(name, "changed")
            return Decision(RUN, f"reads {name}, which {why}")
    for path, digest in sorted(rec.get("files_read", {}).items()):
        now = file_digest_now(path)
        if now != digest:
            if now is None:
                carry = (
                    "carry it with `nbrewind pack --with-inputs`"
                    if relative_inside(path) is not None
                    else "outside the working directory: no pack carries it"
                )
                return Decision(RUN, f"reads file {path}, which is missing here ({carry})")
            return Decision(RUN, f"reads file {path}, which changed")
    for path, digest in sorted((rec.get("dirs_read") or {}).items()):
        if listing_now is None or listing_now(path) != digest:
            return Decision(RUN, f"lists directory {path}, whose entries changed")
    if rec.get("env_read"):
        changed = (
            environment_reads_now(rec["env_read"], environ_now)
            if environ_now is not None
            else "the environment (unknown here)"
        )
        if changed:
            return Decision(RUN, f"reads {changed}, which changed")
    for path, seen in sorted((rec.get("stats_read") or {}).items()):
        if stat_now is None or stat_now(path) != seen:
            return Decision(RUN, f"checks {path} (exists, size), which changed")
    unpicklable = sorted(n for n, w in rec["writes"].items() if w.get("kind") == "unpicklable")
    needed = [n for n in unpicklable if n in facts.needed_later or ANY_NAME in facts.needed_later]
    if needed:
        return Decision(
            RUN,
            f"writes {', '.join(needed)}, which cannot be checkpointed and a later cell reads",
            structural=True,
        )
    if facts.unrestorable_file is not None:
        return Decision(
            RUN,
            f"wrote {facts.unrestorable_file}, which is not on disk as it wrote it and has no "
            "copy in the store",
        )
    if not facts.blobs_present:
        return Decision(RUN, "a checkpoint is missing or does not match its digest: not loaded")
    if rec.get("outputs") != facts.outputs_digest:
        return Decision(RUN, "its saved outputs are missing or were edited")
    return Decision(RESTORE, "unchanged: same source, same inputs, trusted checkpoint")
