"""Paper scale (issue 17): N no-op invocations in one Snakemake run, N up to 150,000.

Variants, interleaved at each size so machine noise hits all alike, ``-j 2``:

- ``sticky+incremental``: ``--executor sticky --scheduler incremental`` (this project), each
  job a ``script:`` invocation on a warm worker;
- ``sticky+greedy``: the same with Snakemake's greedy scheduler (what the profiles used);
- ``threads+greedy``: the strongest baseline a user would pick, Snakemake's local executor
  running trivial ``run:`` jobs in threads (``--force-use-threads``), greedy scheduler;
- ``sticky+incremental+snakemake-loop``: ``sticky+incremental`` keeping Snakemake's own
  schedule loop (``--scheduler-incremental-snakemake-loop``; the plugin runs the loop itself
  otherwise), and ``sticky+incremental+snakemake-rounds`` keeping its per-round selection
  step too: the comparisons for those two takeovers;
- ``sticky+incremental+patch`` (with ``--upstream-patch``): ``sticky+incremental`` on a
  Snakemake whose job scheduler carries the patch proposed upstream
  (``upstream/snakemake/scheduling-per-round.patch``, applied in the benchmark's process
  only, see ``_patched_snakemake.py``).

Reported per run: wall seconds, cost per invocation (wall / N) and the peak RSS of the main
Snakemake process (where the sticky manager runs). The greedy variants cost O(N^2) per run
(they re-weight every ready job every round); above ``--baseline-max`` jobs they are not run
and their time is extrapolated from a fit ``a N + b N^2`` of the sizes measured.

Goals (issue 17): 150k invocations in under 30 minutes; cost per invocation at 150k within
1.5x of that at 2k; main-process peak RSS under 2 GB, read here as 2 GiB (2,048 MiB). In SI
units 2 GB is 2,000 MB = 1,907 MiB, a stricter bound: the figures give both (1 MiB =
1.048576 MB).

Results accumulate: bench/results/scale.json keeps one run per (variant, n), the newest (each
run carries its date), so a run of some sizes keeps the others' figures; the summary and the
goals (met / not met / not measured, per goal and per project variant) are recomputed over all
kept runs.

    python bench/scale.py --quick            # 2k and 8k
    python bench/scale.py                    # 2k, 8k, 32k
    python bench/scale.py --sizes 150000 --variants sticky+incremental
    python bench/scale.py --recompute        # summary and goals again, nothing run
    python bench/scale.py --sizes 2000 --variants sticky+incremental+patch --profile p.out
    python bench/scale.py --sizes 2000 --variants sticky+incremental --results /tmp/ab.json
"""

import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Optional

sys.path.insert(0, str(Path(__file__).parent))  # this folder's helpers, then off sys.path
from _common import NOOP_STICKY as STICKY  # noqa: E402
from _common import NOOP_THREADS as THREADS  # noqa: E402
from _common import RESULTS, ROOT, WORK, noop_workflow, write_result  # noqa: E402

sys.path.pop(0)  # bench/distea.py and bench/nbrewind.py would shadow the packages

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
    # Snakemake's own schedule loop kept (the plugin goes on with it otherwise,
    # snakemake_scheduler_plugin_incremental._rounds.RoundLoop): the comparison for the loop.
    "sticky+incremental+snakemake-loop": (
        STICKY,
        [
            "--executor",
            "sticky",
            "--scheduler",
            "incremental",
            "--scheduler-incremental-snakemake-loop",
        ],
        False,
    ),
    # Snakemake's own per-round selection step kept (the plugin takes it over otherwise,
    # snakemake_scheduler_plugin_incremental._rounds): the comparison for that step.
    "sticky+incremental+snakemake-rounds": (
        STICKY,
        [
            "--executor",
            "sticky",
            "--scheduler",
            "incremental",
            "--scheduler-incremental-snakemake-rounds",
        ],
        False,
    ),
}
GREEDY = ("sticky+greedy", "threads+greedy")
# Snakemake's default --max-jobs-per-timespan is 100/1s: a floor of 25 minutes for 150k jobs
# whatever else is done. profiles/local raises it (it throttles cluster submissions; sticky
# invocations and local jobs submit nothing); every variant here runs with the same value.
RATE = ["--max-jobs-per-timespan", "100000/1s"]
GOAL_150K_S = 1800.0
GOAL_PER_INVOCATION_RATIO = 1.5
GOAL_RSS_MIB = 2048.0  # 2 GiB; the "2 GB" in binary units
MB_PER_MIB = 1.048576


def prepare(name: str, snakefile: str) -> Path:
    return noop_workflow(WORK / "scale" / name.replace("+", "_"), snakefile)


def run(name: str, n: int, timeout: float, profile: Optional[Path] = None) -> dict[str, Any]:
    """One fresh run: wall seconds, seconds per invocation, main-process peak RSS (MiB).
    ``profile``: run the main Snakemake process under cProfile, its stats written there."""
    snakefile, args, patched = VARIANTS[name]
    wd = prepare(name, snakefile)
    rss_file = wd / "peak_rss_kib"
    runner = "_patched_snakemake.py" if patched else "_peak_rss.py"
    profiler = ["-m", "cProfile", "-o", str(profile.resolve())] if profile is not None else []
    cmd = [
        sys.executable, *profiler, str(ROOT / "bench" / runner), str(rss_file),
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


# Results are kept across runs: bench/results/scale.json holds one run per (variant, n), the
# newest, each with its date; the summary and the goals are recomputed over all of them.
RunKey = tuple[str, int]
DATE_FORMAT = "%Y-%m-%dT%H:%M:%S%z"
MET, NOT_MET, NOT_MEASURED = "met", "not met", "not measured"
# The goals are about what the project offers at paper scale; the greedy variants are
# baselines, not candidates.
GOAL_VARIANTS = ("sticky+incremental", "sticky+incremental+patch")
GOAL_N = 150_000
SMALL_N = 2_000


def _when(run: dict[str, Any]) -> datetime.datetime:
    return datetime.datetime.strptime(run["date"], DATE_FORMAT)


def runs_of_file(data: dict[str, Any]) -> list[dict[str, Any]]:
    """The runs a results file holds; runs written before runs carried a date get the file's."""
    return [{"date": data["date"], **r} if "date" not in r else r for r in data.get("runs", [])]


def merge_runs(kept: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One run per (variant, n): the newer of two replaces the older (on equal dates, the one
    from ``new``). Sorted by n, then variant."""
    merged: dict[RunKey, dict[str, Any]] = {}
    for run in [*kept, *new]:
        key = (run["variant"], int(run["n"]))
        if key not in merged or _when(run) >= _when(merged[key]):
            merged[key] = run
    return [merged[k] for k in sorted(merged, key=lambda k: (k[1], k[0]))]


def _measured(runs: list[dict[str, Any]], variant: str) -> dict[int, dict[str, Any]]:
    return {int(r["n"]): r for r in runs if r["variant"] == variant and "wall_s" in r}


def summarize(runs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per variant, over every kept run: wall and cost per invocation by n, the fit
    ``a n + b n^2`` and its 150k extrapolation, the cost ratio largest / smallest n, peak RSS."""
    summary: dict[str, dict[str, Any]] = {}
    for variant in sorted({r["variant"] for r in runs}):
        at = _measured(runs, variant)
        if not at:
            continue
        entry: dict[str, Any] = {
            "measured_wall_s": {str(n): at[n]["wall_s"] for n in sorted(at)},
            "ms_per_invocation": {str(n): at[n]["ms_per_invocation"] for n in sorted(at)},
            # Kept runs may come from different sessions (load, code): when each ran.
            "run_dates": {str(n): at[n]["date"] for n in sorted(at)},
        }
        fit = fit_quadratic([(n, r["wall_s"]) for n, r in sorted(at.items())])
        if fit is not None:
            a, b = fit
            entry["fit_a_s_per_job"] = a
            entry["fit_b_s_per_job2"] = b
            entry["extrapolated_150k_s"] = round(a * GOAL_N + b * GOAL_N**2, 0)
        smallest, largest = min(at), max(at)
        entry["per_invocation_ratio_largest_vs_smallest"] = round(
            at[largest]["ms_per_invocation"] / at[smallest]["ms_per_invocation"], 3
        )
        entry["max_main_peak_rss_mib"] = max(r["main_peak_rss_mib"] for r in at.values())
        summary[variant] = entry
    return summary


def _goal_wall(runs: list[dict[str, Any]], variant: str) -> tuple[str, str]:
    big = [r for r in runs if r["variant"] == variant and int(r["n"]) >= GOAL_N]
    for r in big:
        if "wall_s" in r:
            ok = r["wall_s"] < GOAL_150K_S
            return (MET if ok else NOT_MET), f"{r['wall_s']:.0f} s at {r['n']}"
    for r in big:
        if r.get("timed_out_after_s", 0) >= GOAL_150K_S:
            return NOT_MET, f"timed out after {r['timed_out_after_s']:.0f} s at {r['n']}"
    at = _measured(runs, variant)
    if not at:
        return NOT_MEASURED, "no run"
    n = max(at)
    linear = at[n]["wall_s"] / n * GOAL_N
    return NOT_MEASURED, f"largest run {n}; linear from it: {linear:.0f} s"


def _goal_ratio(runs: list[dict[str, Any]], variant: str) -> tuple[str, str]:
    at = _measured(runs, variant)
    if not at:
        return NOT_MEASURED, "no run"
    big = max(at)
    small = SMALL_N if SMALL_N in at else min(at)
    ratio = at[big]["ms_per_invocation"] / at[small]["ms_per_invocation"]
    # Runs are kept across sessions: say when each ran (machine load and code may differ).
    when = f"{at[big]['date'][:16]}, {at[small]['date'][:16]}"
    detail = f"{big} / {small}: {ratio:.2f}x (runs of {when})"
    if big < GOAL_N or small != SMALL_N:
        return NOT_MEASURED, detail
    return (MET if ratio <= GOAL_PER_INVOCATION_RATIO else NOT_MET), detail


def _goal_rss(runs: list[dict[str, Any]], variant: str) -> tuple[str, str]:
    at = _measured(runs, variant)
    if not at:
        return NOT_MEASURED, "no run"
    n, top = max(((n, r["main_peak_rss_mib"]) for n, r in at.items()), key=lambda x: x[1])
    detail = f"{top:,.0f} MiB ({top * MB_PER_MIB:,.0f} MB) at {n}"
    if top >= GOAL_RSS_MIB:  # RSS grows with n: a smaller run over the limit settles it
        return NOT_MET, detail
    if max(at) >= GOAL_N:
        return MET, detail
    return NOT_MEASURED, detail


GOALS = {
    # name: (target, evaluation per variant)
    "wall_150k": (f"{GOAL_N} invocations in under {GOAL_150K_S:.0f} s", _goal_wall),
    "per_invocation_150k_vs_2k": (
        f"cost per invocation at {GOAL_N} within {GOAL_PER_INVOCATION_RATIO}x of that at {SMALL_N}",
        _goal_ratio,
    ),
    "main_peak_rss": (
        f"main-process peak RSS under 2 GiB ({GOAL_RSS_MIB:,.0f} MiB; "
        f"{GOAL_RSS_MIB * MB_PER_MIB:,.0f} MB) at {GOAL_N}",
        _goal_rss,
    ),
}


def goals(runs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per goal: met (by at least one of the project's variants), not met (measured, met by
    none) or not measured; and each variant's own status and figure."""
    out: dict[str, dict[str, Any]] = {}
    for name, (target, evaluate) in GOALS.items():
        by_variant = {v: evaluate(runs, v) for v in GOAL_VARIANTS}
        statuses = {status for status, _ in by_variant.values()}
        overall = MET if MET in statuses else NOT_MET if NOT_MET in statuses else NOT_MEASURED
        out[name] = {
            "target": target,
            "status": overall,
            "by_variant": {v: f"{s}: {d}" for v, (s, d) in by_variant.items()},
        }
    return out


def results_document(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """What bench/results/scale.json holds (besides write_result's header)."""
    return {
        "jobs": 2,
        "rate": RATE[1],
        "runs": runs,
        "summary": summarize(runs),
        "goals": goals(runs),
    }


def print_profile(path: Path, n: int, top: int = 40) -> None:
    """The main thread's top costs (own time, then cumulative), with calls per job."""
    import pstats

    stats = pstats.Stats(str(path))
    for key in ("tottime", "cumulative"):
        print(f"\n  by {key} (ncalls / {n} = calls per job):")
        stats.sort_stats(key).print_stats(top)


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
    parser.add_argument(
        "--recompute",
        action="store_true",
        help="run nothing: recompute the summary and the goals from the kept runs",
    )
    parser.add_argument(
        "--results",
        type=Path,
        metavar="JSON",
        help="keep the runs in this file instead of bench/results/scale.json (comparisons "
        "of code versions that should not enter the project's figures)",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        metavar="STATS",
        help="one run (one size, one variant) with its main Snakemake process under cProfile: "
        "stats written to STATS, the top costs printed, nothing recorded (the profiler slows "
        "the run)",
    )
    args = parser.parse_args()
    sizes = args.sizes or ([2000, 8000] if args.quick else [2000, 8000, 32000])
    variants = args.variants or [v for v in VARIANTS if args.upstream_patch or not VARIANTS[v][2]]
    if args.profile is not None:
        if len(sizes) != 1 or len(variants) != 1:
            sys.exit("--profile: give one size (--sizes N) and one variant (--variants NAME)")
        r = run(variants[0], sizes[0], args.timeout, profile=args.profile)
        print(f"  {sizes[0]} {variants[0]} under cProfile: {r}")
        print_profile(args.profile, sizes[0])
        return
    results: list[dict[str, Any]] = []
    for n in [] if args.recompute else sorted(sizes):
        for name in variants:
            if name in GREEDY and n > args.baseline_max:
                continue
            load = round(os.getloadavg()[0], 2)
            r = run(name, n, args.timeout)
            results.append({**r, "date": time.strftime(DATE_FORMAT), "load_avg_1m_at_start": load})
            if "wall_s" in r:
                print(
                    f"  {n:>7} {name:<26} {r['wall_s']:9.1f} s  {r['ms_per_invocation']:7.2f} "
                    f"ms/invocation  peak RSS {r['main_peak_rss_mib']:7.1f} MiB",
                    flush=True,
                )
            else:
                print(f"  {n:>7} {name:<26} timed out after {args.timeout:.0f} s", flush=True)

    previous = args.results or RESULTS / "scale.json"
    kept = runs_of_file(json.loads(previous.read_text())) if previous.exists() else []
    document = results_document(merge_runs(kept, results))
    for name, entry in document["summary"].items():
        at = entry["ms_per_invocation"]
        extra = (
            f", extrapolated 150k: {entry['extrapolated_150k_s'] / 60:.0f} min"
            if "extrapolated_150k_s" in entry
            else ""
        )
        print(
            f"  {name}: ms/invocation by n {at}; largest / smallest "
            f"{entry['per_invocation_ratio_largest_vs_smallest']:.2f}x{extra}; peak RSS max "
            f"{entry['max_main_peak_rss_mib']:.0f} MiB"
        )
    for name, goal in document["goals"].items():
        print(f"  goal {name} ({goal['target']}): {goal['status']}")
        for variant, verdict in goal["by_variant"].items():
            print(f"    {variant}: {verdict}")
    path = write_result("scale", document, args.results)
    print(f"  written (runs kept per variant and size, the newest of each): {path}")


if __name__ == "__main__":
    main()
