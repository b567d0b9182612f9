"""Failed trials, made visible: which failures the objective declared, the limit on the others,
and the line a search ends with.

A trial fails *declared* when its objective raises :class:`TrialFailed` or returns a
non-finite loss (a result the search learns from), and *undeclared* when it raises anything
else (an error in the objective or its environment: nothing to learn from). Undeclared failures
beyond the spec's ``max_failed_trials`` (default 0) fail the run.
"""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ._errors import TrialsFailedError

Record = Mapping[str, Any]


def is_failed(record: Record) -> bool:
    return record.get("status") != "ok"


def is_undeclared(record: Record) -> bool:
    """A failed record whose error the objective did not declare (records written before
    ``declared`` existed count as declared: they were data then)."""
    return is_failed(record) and record.get("declared") is False


def first_line(record: Record) -> str:
    error = str(record.get("error") or "no error recorded").strip()
    return error.splitlines()[0] if error else "no error recorded"


def failure_summary(records: Sequence[Record], max_failed: int = 0) -> str:
    """``shadho: 48 trials, 2 failed; first: trial cnn.3: TrialFailed: diverged``, then how
    many were errors the objective does not declare, where there were any."""
    failed = [r for r in records if is_failed(r)]
    line = f"shadho: {len(records)} trials, {len(failed)} failed"
    if not failed:
        return line
    line += f"; first: trial {failed[0].get('trial')}: {first_line(failed[0])}"
    undeclared = sum(1 for r in failed if is_undeclared(r))
    if undeclared:
        line += (
            f"; {undeclared} of them with an error the objective does not declare "
            f"(max_failed_trials: {max_failed})"
        )
    return line


def check_failures(records: Iterable[Record], max_failed: int, rerun: str = "") -> None:
    """Raise :class:`TrialsFailedError` when more than ``max_failed`` records failed
    undeclared; ``rerun`` says how to redo those trials once the objective is fixed."""
    bad = [r for r in records if is_undeclared(r)]
    if len(bad) <= max_failed:
        return
    first = bad[0]
    raise TrialsFailedError(
        f"{len(bad)} trial(s) failed with an error the objective does not declare "
        f"(max_failed_trials: {max_failed}); first: trial {first.get('trial')} "
        f"({first.get('subspace')} on {first.get('hw_class')}): {first_line(first)}. "
        "Fix the objective, raise snakemake_shadho.TrialFailed for a failure it expects, or "
        f"raise hpo.max_failed_trials{'; ' + rerun if rerun else ''}"
    )


def undeclared_note(trial: str, max_failed: int) -> str:
    """What a trial job's error says under the trace of its objective's exception."""
    return (
        f"shadho: trial {trial} failed with an error its objective does not declare "
        f"(max_failed_trials: {max_failed}): fix the objective, raise "
        "snakemake_shadho.TrialFailed for a failure it expects, or raise hpo.max_failed_trials"
    )
