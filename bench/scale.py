"""Paper scale (issue 17): N no-op invocations in one Snakemake run, N up to 150,000.

Variants, interleaved at each size so machine noise hits all alike, ``-j 2``:

- ``sticky+incremental``: ``--executor sticky --scheduler incremental`` (this project), each
  job a ``script:`` invocation on a warm worker;
- ``sticky+greedy``: the same with Snakemake's greedy scheduler (what the profiles used);
- ``threads+greedy``: the strongest baseline a user would pick, Snakemake's local executor
  running trivial ``run:`` jobs in threads (``--force-use-threads``), greedy scheduler;
- ``sticky+incremental+patch`` (with ``--upstream-patch``): ``sticky+incremental`` on a
  Snakemake whose job scheduler carries the patch proposed upstream
  (``upstream/snakemake/scheduling-per-round.patch``, applied in the benchmark's process
  only, see ``_patched_snakemake.py``).

Reported per run: wall seconds, cost per invocation (wall / N) and the peak RSS of the main
Snakemake process (where the sticky manager runs). The greedy variants cost O(N^2) per run
(they re-weight every ready job every round); above ``--baseline-max`` jobs they are not run
and their time is extrapolated from a fit ``a N + b N^2`` of the sizes measured.

Goals (issue 17): 150k invocations in under 30 minutes; cost per invocation at 150k within
1.5x of that at 2k; main-process peak RSS under 2 GB.

    python bench/scale.py --quick            # 2k and 8k
    python bench/scale.py                    # 2k, 8k, 32k
    python bench/scale.py --sizes 150000 --variants sticky+incremental
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Optional

sys.path.insert(0, str(Path(__file__).parent))
from _common import NOOP_STICKY as STICKY  # noqa: E402
from _common import NOOP_THREADS as THREADS  # noqa: E402
from _common import ROOT, WORK, noop_workflow, write_result  # noqa: E402

VARIANTS: dict[str, tuple[str, list[str], bool]] = {
    # name: (Snakefile, arguments, runs under the patched Snakemake)
    "sticky+incremental": (STICKY, ["--executor", "sticky", "--scheduler", "incremental"], False),
    "sticky+greedy": (STICKY, ["--executor", "sticky", "--scheduler", "greedy"], False),
    "threads+greedy": (
        THREADS,
        ["--executor", "local", "--force-use-threads", "--scheduler", "greedy"],
        False,
    ),
    "sticky+incremental+patch": (
        STICKY,
        ["--executor", "sticky", "--scheduler", "incremental"],
        True,
    ),
}
GREEDY = ("sticky+greedy", "threads+greedy")
# Snakemake's default --max-jobs-per-timespan is 100/1s: a floor of 25 minutes for 150k jobs
# whatever else is done. profiles/local raises it (it throttles cluster submissions; sticky
# invocations and local jobs submit nothing); every variant here runs with the same value.
RATE = ["--max-jobs-per-timespan", "100000/1s"]
GOAL_150K_S = 1800.0
GOAL_PER_INVOCATION_RATIO = 1.5
GOAL_RSS_MIB = 2048.0


def prepare(name: str, snakefile: str) -> Path:
    return noop_workflow(WORK / "scale" / name.replace("+", "_"), snakefile)


def run(name: str, n: int, timeout: float) -> dict[str, Any]:
    """One fresh run: wall seconds, seconds per invocation, main-process peak RSS (MiB)."""
    snakefile, args, patched = VARIANTS[name]
    wd = prepare(name, snakefile)
    rss_file = wd / "peak_rss_kib"
    runner = "_patched_snakemake.py" if patched else "_peak_rss.py"
    cmd = [
        sys.executable, str(ROOT / "bench" / runner), str(rss_file),
        *args, *RATE, "-j", "2", "--config", f"count={n}", "--nocolor", "--quiet", "all",
    ]  # fmt: skip
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=wd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"variant": name, "n": n, "timed_out_after_s": timeout}
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{name} at {n}: failed\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    produced = sum(1 for _ in os.scandir(wd / "out"))
    if produced != n:
        sys.exit(f"{name} at {n}: expected {n} outputs, found {produced}")
    rss = int(rss_file.read_text()) / 1024
    shutil.rmtree(wd, ignore_errors=True)  # 150k files: do not keep them around
    return {
        "variant": name,
        "n": n,
        "wall_s": round(seconds, 2),
        "ms_per_invocation": round(seconds / n * 1000, 3),
        "main_peak_rss_mib": round(rss, 1),
    }


def fit_quadratic(points: list[tuple[int, float]]) -> Optional[tuple[float, float]]:
    """Least squares t = a n + b n^2 (no constant: start-up is small next to these)."""
    if len(points) < 2:
        return None
    s11 = sum(n * n for n, _ in points)
    s12 = sum(n**3 for n, _ in points)
    s22 = sum(n**4 for n, _ in points)
    t1 = sum(n * t for n, t in points)
    t2 = sum(n * n * t for n, t in points)
    det = s11 * s22 - s12 * s12
    if det == 0:
        return None
    a, b = (t1 * s22 - t2 * s12) / det, (s11 * t2 - s12 * t1) / det
    if b < 0 or a < 0:  # noise bent the curve the wrong way: fit t = a n alone
        return t1 / s11, 0.0
    return a, b


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2k and 8k")
    parser.add_argument("--sizes", type=int, nargs="+", help="default 2000 8000 32000")
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=None)
    parser.add_argument(
        "--upstream-patch",
        action="store_true",
        help="also run sticky+incremental on the job scheduler patch proposed upstream",
    )
    parser.add_argument(
        "--baseline-max",
        type=int,
        default=8000,
        help="largest size at which the greedy variants run (default 8000); above it their "
        "time is extrapolated",
    )
    parser.add_argument("--timeout", type=float, default=3600, help="seconds per run")
    args = parser.parse_args()
    sizes = args.sizes or ([2000, 8000] if args.quick else [2000, 8000, 32000])
    variants = args.variants or [v for v in VARIANTS if args.upstream_patch or not VARIANTS[v][2]]
    results: list[dict[str, Any]] = []
    for n in sorted(sizes):
        for name in variants:
            if name in GREEDY and n > args.baseline_max:
                continue
            r = run(name, n, args.timeout)
            results.append(r)
            if "wall_s" in r:
                print(
                    f"  {n:>7} {name:<26} {r['wall_s']:9.1f} s  {r['ms_per_invocation']:7.2f} "
                    f"ms/invocation  peak RSS {r['main_peak_rss_mib']:7.1f} MiB",
                    flush=True,
                )
            else:
                print(f"  {n:>7} {name:<26} timed out after {args.timeout:.0f} s", flush=True)

    summary: dict[str, Any] = {}
    for name in variants:
        points = [(r["n"], r["wall_s"]) for r in results if r["variant"] == name and "wall_s" in r]
        if not points:
            continue
        fit = fit_quadratic(points)
        at = {n: t for n, t in points}
        entry: dict[str, Any] = {"measured_wall_s": at}
        if fit is not None:
            a, b = fit
            entry["fit_a_s_per_job"] = a
            entry["fit_b_s_per_job2"] = b
            entry["extrapolated_150k_s"] = round(a * 150_000 + b * 150_000**2, 0)
        smallest = min(at)
        largest = max(at)
        entry["per_invocation_ratio_largest_vs_smallest"] = round(
            (at[largest] / largest) / (at[smallest] / smallest), 3
        )
        rss = [r["main_peak_rss_mib"] for r in results if r["variant"] == name and "wall_s" in r]
        entry["max_main_peak_rss_mib"] = max(rss)
        summary[name] = entry
        extra = (
            f", extrapolated 150k: {entry['extrapolated_150k_s'] / 60:.0f} min"
            if "extrapolated_150k_s" in entry
            else ""
        )
        print(
            f"  {name}: per-invocation cost at {largest} / at {smallest}: "
            f"{entry['per_invocation_ratio_largest_vs_smallest']:.2f}x (goal <= "
            f"{GOAL_PER_INVOCATION_RATIO}x at 150k vs 2k){extra}; peak RSS max "
            f"{entry['max_main_peak_rss_mib']:.0f} MiB (goal < {GOAL_RSS_MIB:.0f})"
        )
    path = write_result(
        "scale_quick" if args.quick else "scale",
        {
            "jobs": 2,
            "quick": args.quick,
            "sizes": sorted(sizes),
            "baseline_max": args.baseline_max,
            "runs": results,
            "summary": summary,
            "goals": {
                "wall_150k_s_under": GOAL_150K_S,
                "per_invocation_150k_over_2k_at_most": GOAL_PER_INVOCATION_RATIO,
                "main_peak_rss_mib_under": GOAL_RSS_MIB,
            },
        },
    )
    print(f"  written: {path.relative_to(ROOT)}")
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
