"""The unit tier's property tests at their full example counts, which the unit tier scales down.

Every property test of tests/unit declares its full count (``max_examples=examples(N)``);
the ``unit`` hypothesis profile, the default, runs a tenth of it (tests/conftest.py). Here
``pytest tests/unit -m hypothesis`` runs under ``HYPOTHESIS_PROFILE=full`` (each run draws new
examples), and once under ``unit`` for the counts CI runs.

    python bench/property_counts.py            # unit once, then full 3 times
    python bench/property_counts.py --quick    # full once (under a minute on a quiet machine)

Figures: property tests, examples run per profile (from hypothesis' statistics), seconds per
run, failures (the contract: 0).
"""

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _pytest_tier import TierRun, finish, run_tier  # noqa: E402

ARGS = ["tests/unit", "-m", "hypothesis"]


def _figures(run: TierRun) -> dict[str, Any]:
    return {
        "passed": run.counts.get("passed", 0),
        "failed": run.counts.get("failed", 0) + run.counts.get("errors", 0),
        "examples": sum(run.examples.values()),
        "wall_s": run.wall_s,
        "cpu_s": run.cpu_s,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int, help="full-profile runs (default 3; --quick 1)")
    args = parser.parse_args()
    runs = args.runs or (1 if args.quick else 3)
    unit = None if args.quick else run_tier(ARGS, "unit", statistics=True)
    if unit is not None:
        print(
            f"unit profile: {unit.counts.get('passed', 0)} property tests passed, "
            f"{sum(unit.examples.values())} examples, {unit.wall_s:.1f} s wall",
            flush=True,
        )
    full: list[TierRun] = []
    for i in range(runs):
        run = run_tier(ARGS, "full", statistics=True)
        full.append(run)
        print(
            f"full profile, run {i + 1}/{runs}: {run.counts.get('passed', 0)} passed, "
            f"{run.counts.get('failed', 0) + run.counts.get('errors', 0)} failed, "
            f"{sum(run.examples.values())} examples, {run.wall_s:.1f} s wall, "
            f"{run.cpu_s:.1f} s CPU",
            flush=True,
        )
    failing = [r for r in full + ([unit] if unit else []) if not r.ok]
    tests = sorted(set(full[0].examples) | set(unit.examples if unit else {}))
    per_test = [
        {
            "test": t,
            "full_examples": full[0].examples.get(t),
            "full_max_examples": full[0].max_examples.get(t),
            **({"unit_examples": unit.examples.get(t)} if unit else {}),
        }
        for t in tests
    ]
    result: dict[str, Any] = {
        "quick": args.quick,
        "property_tests": len(tests),
        "full_runs": runs,
        "full": {
            "examples_per_run": statistics.median(sum(r.examples.values()) for r in full),
            "median_wall_s": statistics.median(r.wall_s for r in full),
            "median_cpu_s": statistics.median(r.cpu_s for r in full),
            "failed_runs": sum(not r.ok for r in full),
        },
        "runs": [{"profile": r.profile, **_figures(r)} for r in ([unit] if unit else []) + full],
        "per_test": per_test,
        "failures": [r.tail for r in failing][:3],
    }
    if unit is not None:
        result["unit"] = {"examples": sum(unit.examples.values()), "wall_s": unit.wall_s}
        result["full_over_unit_examples"] = round(
            result["full"]["examples_per_run"] / max(result["unit"]["examples"], 1), 1
        )
    print(
        f"{len(tests)} property tests; full profile: {result['full']['examples_per_run']:.0f} "
        f"examples per run, median {result['full']['median_wall_s']:.1f} s wall; "
        f"{len(failing)} failing runs"
    )
    finish("property_counts", result, failing)


if __name__ == "__main__":
    main()
