"""The unit tier's wall time against its goal (under 20 s), and against the same tier at the
full hypothesis counts (what it ran before the unit profile).

``pytest tests/unit`` as CI runs it (the ``unit`` hypothesis profile, the default), interleaved
with ``HYPOTHESIS_PROFILE=full pytest tests/unit``: the same tests, every property test at its
declared count. Medians of wall and CPU (user + sys) seconds; CPU is what other load on a
shared machine disturbs least.

    python bench/unit_tier.py            # 3 interleaved pairs
    python bench/unit_tier.py --quick    # the unit tier once, no baseline
"""

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import write_result  # noqa: E402
from _pytest_tier import TierRun, run_tier  # noqa: E402

GOAL_S = 20.0
ARGS = ["tests/unit"]


def _median(runs: list[TierRun], what: str) -> float:
    return round(statistics.median(getattr(r, what) for r in runs), 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int, help="runs of each (default 3; --quick 1)")
    args = parser.parse_args()
    runs = args.runs or (1 if args.quick else 3)
    unit: list[TierRun] = []
    full: list[TierRun] = []
    for i in range(runs):
        profiles = (
            ["unit"] if args.quick else (["unit", "full"] if i % 2 == 0 else ["full", "unit"])
        )
        for profile in profiles:
            run = run_tier(ARGS, profile)
            (unit if profile == "unit" else full).append(run)
            print(
                f"run {i + 1}/{runs}, {profile} profile: {run.counts.get('passed', 0)} passed, "
                f"{run.counts.get('failed', 0) + run.counts.get('errors', 0)} failed, "
                f"{run.wall_s:.1f} s wall, {run.cpu_s:.1f} s CPU",
                flush=True,
            )
    failing = [r for r in unit + full if not r.ok]
    result: dict[str, Any] = {
        "quick": args.quick,
        "goal_wall_s": GOAL_S,
        "tests": sum(n for k, n in unit[0].counts.items() if k != "deselected"),
        "runs": runs,
        "unit_profile": {
            "median_wall_s": _median(unit, "wall_s"),
            "median_cpu_s": _median(unit, "cpu_s"),
            "wall_s": [r.wall_s for r in unit],
        },
        "meets_goal": _median(unit, "wall_s") < GOAL_S,
        "failed_runs": len(failing),
        "failures": [r.tail for r in failing][:3],
    }
    line = (
        f"unit tier ({result['tests']} tests): median {result['unit_profile']['median_wall_s']:.1f}"
        f" s wall (goal < {GOAL_S:.0f} s), {result['unit_profile']['median_cpu_s']:.1f} s CPU"
    )
    if full:
        result["full_profile"] = {
            "median_wall_s": _median(full, "wall_s"),
            "median_cpu_s": _median(full, "cpu_s"),
            "wall_s": [r.wall_s for r in full],
        }
        result["full_over_unit_wall"] = round(
            result["full_profile"]["median_wall_s"] / result["unit_profile"]["median_wall_s"], 2
        )
        line += (
            f"; at full counts {result['full_profile']['median_wall_s']:.1f} s wall "
            f"({result['full_over_unit_wall']:.1f}x)"
        )
    print(line + f"; {len(failing)} failing runs")
    path = write_result("unit_tier", result)
    print(f"wrote {path}")
    if failing:
        print(failing[0].tail, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
