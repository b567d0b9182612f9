"""Folding a round's results into the history of a search (no hyperopt, no numpy: the merge
step between rounds starts fast)."""

from collections.abc import Mapping, Sequence
from typing import Any


def merge_round(
    history: Sequence[Mapping[str, Any]],
    plan: Mapping[str, Any],
    results: Sequence[Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """The history after a round: its records plus this round's, one per planned trial.

    Raises ValueError if a planned trial has no result or a result was not planned: a round's
    results must match its plan exactly.
    """
    by_name = {r["trial"]: dict(r) for r in results}
    planned = {t["trial"] for t in plan["trials"]}
    missing = planned - set(by_name)
    extra = set(by_name) - planned
    if missing or extra:
        raise ValueError(
            f"round {plan['round']}: results do not match the plan "
            f"(missing {sorted(missing)}, unplanned {sorted(extra)})"
        )
    seen = {r["trial"] for r in history}
    repeated = planned & seen
    if repeated:
        raise ValueError(f"round {plan['round']} repeats recorded trials {sorted(repeated)}")
    return [*map(dict, history), *(by_name[t["trial"]] for t in plan["trials"])]
