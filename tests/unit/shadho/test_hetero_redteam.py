"""Issue 30, part 1's red team: hardware specs a user could write from the docs alone (a
helper that saw docs/shadho.md, docs/shadho-execution.md and the benchmark's section, not the
code), each with what the docs promise (``redteam30h_cases.py``). Every case runs a simulated
search with that spec's own classes as the hardware (synthetic losses and costs; the CNN-like
sub-spaces cost more): rejected specs must fail with one line naming a key, valid ones must
run to their budget with every promise kept. Pure: no processes.

Part 3's red team (``redteam30p3_cases.py``, 20 cases, all passing at first run) saw
docs/shadho.md, the README and the benchmark's part-3 and hardware sections after the incumbent
was served by every class and ``rerank_every`` defaulted to ``trials_per_round``: restrictions,
specialists, measuring trials and the setting's validation while the incumbent is spread."""

import math
from collections import Counter
from typing import Any

import numpy as np
import pytest

import snakemake_shadho as shadho
from snakemake_shadho import _simulate as sim
from snakemake_shadho._errors import SpecError
from snakemake_shadho._hardware import by_speed

from .redteam30h_cases import CASES as PART1_CASES
from .redteam30p3_cases import CASES as PART3_CASES

CASES = [*PART1_CASES, *PART3_CASES]


def _pool(spec: shadho.SearchSpec, seed: int) -> sim.EvaluatedPool:
    rng = np.random.default_rng(seed)
    entries = {}
    for k, (name, sub) in enumerate(spec.subspaces.items()):
        drawn = shadho.SubspaceOptimizer(sub.space, n_startup_jobs=10**6).ask(12, 100 + k)
        heavy = 4.0 if "cnn" in name or "net" in name else 1.0
        entries[name] = [
            {
                "vals": s.vals,
                "loss": float(rng.uniform(0.01, 0.3)),
                "cost": float(heavy * rng.uniform(0.5, 2.0)),
            }
            for s in drawn
        ]
    return sim.EvaluatedPool(entries, {n: s.space for n, s in spec.subspaces.items()})


def _run(spec: shadho.SearchSpec, budget: int, seed: int = 0) -> list[tuple[str, str]]:
    """(class, sub-space) of every trial of a simulated search of ``budget`` trials, in the
    spec's execution mode (asynchronous, or rounds of ``trials_per_round``)."""
    pool = _pool(spec, 0)
    cluster = sim.Cluster(by_speed(spec.classes))
    if spec.execution == "async":
        result = sim.simulate_shadho_async(spec, pool, budget, seed)
    else:
        rounds = max(1, math.ceil(budget / spec.trials_per_round))
        result = sim.simulate_shadho(spec, pool, rounds, seed)
    return [(cluster.names[t.worker], t.subspace) for t in result.trials]


def _check(case: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    expect = case["expect"]
    try:
        spec = shadho.load_spec(case["spec"])
    except SpecError as e:
        message = str(e)
        if "rejected" not in expect:
            problems.append(f"rejected, not expected: {message}")
        elif "\n" in message.strip() or "hpo" not in message:
            problems.append(f"the rejection is not one line naming a key: {message!r}")
        return problems
    if "rejected" in expect:
        problems.append("accepted, but the docs say it is refused")
        return problems
    placed: list[tuple[str, str]] = []
    for seed in range(case.get("seeds", 1)):  # "mostly" over several searches where it is close
        try:
            trials = _run(spec, case["budget"], seed)
        except Exception as e:  # noqa: BLE001 - any crash is a finding
            return [f"the search crashed: {type(e).__name__}: {e}"]
        if len(trials) < case["budget"]:
            problems.append(f"seed {seed} ran {len(trials)} of {case['budget']} trials")
        placed += trials
    counts = Counter(placed)
    for item in expect:
        kind, _, rest = item.partition(":")
        if kind in ("valid", "no_idle"):
            continue
        cls, sub = rest.split(":")  # CLASS may be several, joined by "+"
        total = sum(n for (_, s), n in counts.items() if s == sub)
        mine = sum(counts[(c, sub)] for c in cls.split("+"))
        if kind == "never_on" and mine:
            problems.append(f"{mine} trial(s) of {sub} ran on {cls}")
        elif kind == "mostly_on" and not mine > total / 2:
            problems.append(f"{mine} of {total} trials of {sub} ran on {cls}, not most")
        elif kind == "some_on" and not mine:
            problems.append(f"no trial of {sub} ran on {cls} ({total} in all)")
    return problems


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_red_team_case(case: dict[str, Any]) -> None:
    assert not _check(case), f"{case['name']}: {case['why']}\n" + "\n".join(_check(case))
