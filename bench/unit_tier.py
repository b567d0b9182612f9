"""The unit tier's wall time against its goal (under 20 s), and against the same tier at the
full hypothesis counts (what it ran before the unit profile).

``pytest tests/unit`` as a developer runs it while editing (the ``unit`` hypothesis profile,
the default; bytecode cached by an earlier run), interleaved with
``HYPOTHESIS_PROFILE=full pytest tests/unit``: the same tests, every property test at its
declared count. The bytecode cache is private to the benchmark (``PYTHONPYCACHEPREFIX``
under bench/work), filled by one run that is not counted. One more run caches nothing
(``PYTHONDONTWRITEBYTECODE=1``): every module of this checkout and every module pytest
rewrites (the test modules, hypothesis) compiled again, as on a fresh clone's first run.
Medians of wall and CPU (user + sys) seconds; CPU is what other load on a shared machine
disturbs least, wall is what the goal is about.

    python bench/unit_tier.py            # 3 interleaved pairs, and one run without a cache
    python bench/unit_tier.py --quick    # the unit tier once (after the warm-up run)
"""

import argparse
import os
import shutil
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import WORK  # noqa: E402
from _pytest_tier import TierRun, bytecode_env, finish, run_tier  # noqa: E402

GOAL_S = 20.0
ARGS = ["tests/unit"]
CACHE = WORK / "unit_tier_pycache"


def _median(runs: list[TierRun], what: str) -> float:
    return round(statistics.median(getattr(r, what) for r in runs), 2)


def _show(label: str, run: TierRun) -> None:
    print(
        f"{label}: {run.counts.get('passed', 0)} passed, "
        f"{run.counts.get('failed', 0) + run.counts.get('errors', 0)} failed, "
        f"{run.wall_s:.1f} s wall, {run.cpu_s:.1f} s CPU",
        flush=True,
    )


def _summary(runs: list[TierRun]) -> dict[str, Any]:
    return {
        "median_wall_s": _median(runs, "wall_s"),
        "median_cpu_s": _median(runs, "cpu_s"),
        "wall_s": [r.wall_s for r in runs],
        "cpu_s": [r.cpu_s for r in runs],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--runs", type=int, help="runs of each (default 3; --quick 1)")
    args = parser.parse_args()
    runs = args.runs or (1 if args.quick else 3)
    shutil.rmtree(CACHE, ignore_errors=True)
    warm = bytecode_env(CACHE)
    _show("warm-up (fills the bytecode cache, not counted)", run_tier(ARGS, "unit", env=warm))
    unit: list[TierRun] = []
    full: list[TierRun] = []
    for i in range(runs):
        profiles = (
            ["unit"] if args.quick else (["unit", "full"] if i % 2 == 0 else ["full", "unit"])
        )
        for profile in profiles:
            run = run_tier(ARGS, profile, env=warm)
            (unit if profile == "unit" else full).append(run)
            _show(f"run {i + 1}/{runs}, {profile} profile", run)
    cold = None if args.quick else run_tier(ARGS, "unit", env=bytecode_env(None))
    if cold is not None:
        _show("unit profile, no bytecode cache", cold)
    shutil.rmtree(CACHE, ignore_errors=True)
    failing = [r for r in unit + full + ([cold] if cold else []) if not r.ok]
    result: dict[str, Any] = {
        "quick": args.quick,
        "goal_wall_s": GOAL_S,
        "tests": sum(n for k, n in unit[0].counts.items() if k != "deselected"),
        "runs": runs,
        "cpus": os.cpu_count(),
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "unit_profile": _summary(unit),
        "meets_goal": _median(unit, "wall_s") < GOAL_S,
        "failed_runs": len(failing),
        "failures": [r.tail for r in failing][:3],
    }
    line = (
        f"unit tier ({result['tests']} tests): median {result['unit_profile']['median_wall_s']:.1f}"
        f" s wall (goal < {GOAL_S:.0f} s), {result['unit_profile']['median_cpu_s']:.1f} s CPU"
    )
    if full:
        result["full_profile"] = _summary(full)
        result["full_over_unit_cpu"] = round(
            result["full_profile"]["median_cpu_s"] / result["unit_profile"]["median_cpu_s"], 2
        )
        line += (
            f"; at full counts {result['full_profile']['median_wall_s']:.1f} s wall, "
            f"{result['full_profile']['median_cpu_s']:.1f} s CPU "
            f"({result['full_over_unit_cpu']:.1f}x the CPU)"
        )
    if cold is not None:
        result["no_bytecode_cache"] = {"wall_s": cold.wall_s, "cpu_s": cold.cpu_s}
        line += f"; without a bytecode cache {cold.wall_s:.1f} s wall, {cold.cpu_s:.1f} s CPU"
    print(line + f"; {len(failing)} failing runs")
    finish("unit_tier", result, failing)


if __name__ == "__main__":
    main()
