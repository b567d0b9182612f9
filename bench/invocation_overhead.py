"""Per-invocation cost of the sticky executor, against Snakemake's own fastest path.

N no-op jobs, ``-j 2``: (a) ``--executor sticky``, each job a ``script:`` invocation on a
warm worker; (b) the baseline, Snakemake's fastest path: the local executor running trivial
``run:`` jobs in threads (``--force-use-threads``), with no process per job. Both use the
greedy scheduler (the ILP scheduler's per-round cost would dominate both). Both include
Snakemake's own start-up, DAG building, scheduling and metadata writing, so the ratio shows
what the executor adds on top. Also reported: invocations per second and the peak memory
of the main Snakemake process.

Target (issue #2): sticky at most 1.5x the baseline's time for 2,000 invocations; issue 25:
still so in direct mode with its after-invocation check on (direct mode restores the process
after every invocation, then compares it with the template's process and retires a changed
worker; target 1.1x). Also measured: the same invocations in fork mode (the default since issue
25: each invocation in a child forked ahead of time from the warm worker), and the cost per
invocation of each mode from the metrics (median worker-side latency), and in-process.

    python bench/invocation_overhead.py           # 2,000 invocations
    python bench/invocation_overhead.py --quick   # 300 invocations
"""

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import NOOP_STICKY as STICKY  # noqa: E402
from _common import NOOP_THREADS as THREADS  # noqa: E402
from _common import ROOT, WORK, noop_workflow, timed, write_result  # noqa: E402


def prepare(name: str, snakefile: str, isolation: str = "direct") -> Path:
    return noop_workflow(WORK / "invocation_overhead" / name, snakefile, isolation)


def run(
    name: str, snakefile: str, n: int, executor_args: list[str], isolation: str = "direct"
) -> tuple[float, float]:
    """Wall seconds and main-process peak RSS (MiB) of one fresh run."""
    wd = prepare(name, snakefile, isolation)
    rss_file = wd / "peak_rss_kib"
    cmd = [
        sys.executable,
        str(ROOT / "bench" / "_peak_rss.py"),
        str(rss_file),
        *executor_args,
        "-j",
        "2",
        "--scheduler",
        "greedy",
        "--config",
        f"count={n}",
        "--nocolor",
        "--quiet",
        "all",
    ]
    seconds = timed(cmd, wd)
    produced = len(list((wd / "out").iterdir()))
    if produced != n:
        sys.exit(f"{name}: expected {n} outputs, found {produced}")
    return seconds, int(rss_file.read_text()) / 1024


def worker_ms(name: str) -> float:
    """Median time (ms) from dispatch to the worker's reply, per invocation, of the last run."""
    logs = sorted((WORK / "invocation_overhead" / name / ".snakemake" / "sticky").glob("*/*.jsonl"))
    records = [json.loads(line) for line in logs[-1].read_text().splitlines()]
    spans = [r["latency_s"] - r["queued_s"] for r in records if r["event"] == "invocation"]
    return statistics.median(spans) * 1000


def in_process_costs(n: int, heavy: bool) -> dict[str, float]:
    """Worker-side ms per no-op invocation, direct and fork mode, and a bare fork (see
    _invocation_cost.py); with ``heavy``, in a worker that imported torch and transformers."""
    cmd = [sys.executable, str(ROOT / "bench" / "_invocation_cost.py"), str(n)]
    # As the manager starts workers: one OpenMP thread (torch's pool would otherwise be a
    # fork hazard, and fork mode would fall back to direct mode).
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    out = subprocess.run(
        cmd + (["--heavy"] if heavy else []), capture_output=True, text=True, check=True, env=env
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="300 invocations, one repeat")
    parser.add_argument("--invocations", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=None, help="default 3 (1 with --quick)")
    args = parser.parse_args()
    n = args.invocations or (300 if args.quick else 2000)
    repeats = args.repeats or (1 if args.quick else 3)
    sticky, threads, fork = [], [], []
    direct_ms, fork_ms = [], []
    for i in range(repeats):  # interleaved: machine noise hits all alike
        sticky.append(run("sticky", STICKY, n, ["--executor", "sticky"]))
        direct_ms.append(worker_ms("sticky"))
        threads.append(run("threads", THREADS, n, ["--executor", "local", "--force-use-threads"]))
        fork.append(run("fork", STICKY, n, ["--executor", "sticky"], isolation="fork"))
        fork_ms.append(worker_ms("fork"))
        print(
            f"  repeat {i + 1}: sticky {sticky[-1][0]:.2f} s, threads {threads[-1][0]:.2f} s, "
            f"sticky fork mode {fork[-1][0]:.2f} s",
            flush=True,
        )
    costs = {"snakemake": in_process_costs(100 if args.quick else 500, heavy=False)}
    if importlib.util.find_spec("torch") and importlib.util.find_spec("transformers"):
        costs["torch+transformers"] = in_process_costs(30 if args.quick else 100, heavy=True)
    sticky_s = statistics.median(s for s, _ in sticky)
    threads_s = statistics.median(s for s, _ in threads)
    sticky_rss = max(r for _, r in sticky)
    threads_rss = max(r for _, r in threads)
    ratio = sticky_s / threads_s
    fork_s = statistics.median(s for s, _ in fork)
    direct_inv_ms, fork_inv_ms = statistics.median(direct_ms), statistics.median(fork_ms)
    print(f"\n{n} no-op invocations, -j 2, --scheduler greedy (median of {repeats})")
    print(
        f"  sticky executor         : {sticky_s:7.2f} s  {n / sticky_s:7.1f} invocations/s  "
        f"peak RSS of main process {sticky_rss:6.1f} MiB"
    )
    print(
        f"  local, run: in threads  : {threads_s:7.2f} s  {n / threads_s:7.1f} jobs/s         "
        f"peak RSS of main process {threads_rss:6.1f} MiB"
    )
    print(f"  sticky / baseline       : {ratio:7.2f}x  (target <= 1.5x; isolation on)")
    print(
        f"  sticky, fork mode       : {fork_s:7.2f} s  {n / fork_s:7.1f} invocations/s  "
        f"({fork_s / threads_s:.2f}x the baseline)"
    )
    print(
        f"  per invocation, dispatch to reply (median): direct {direct_inv_ms:.2f} ms, "
        f"fork {fork_inv_ms:.2f} ms: fork mode costs {fork_inv_ms - direct_inv_ms:+.2f} ms"
    )
    for worker, c in costs.items():
        print(
            f"  in-process, worker with {worker} loaded ({c['worker_rss_mib']:.0f} MiB): "
            f"direct {c['direct_ms']:.2f} ms, fork {c['fork_ms']:.2f} ms per invocation with "
            f"the next child forked ahead ({c['fork_between_ms']:.2f} ms between invocations), "
            f"{c['fork_on_demand_ms']:.2f} ms forked on demand "
            f"(a bare fork+exit: {c['bare_fork_ms']:.2f} ms)"
        )
    path = write_result(
        "invocation_overhead",
        {
            "invocations": n,
            "jobs": 2,
            "quick": args.quick,
            "repeats": repeats,
            "sticky_s": round(sticky_s, 3),
            "baseline_threads_s": round(threads_s, 3),
            "sticky_runs_s": [round(s, 3) for s, _ in sticky],
            "baseline_runs_s": [round(s, 3) for s, _ in threads],
            "sticky_invocations_per_s": round(n / sticky_s, 1),
            "baseline_jobs_per_s": round(n / threads_s, 1),
            "sticky_main_peak_rss_mib": round(sticky_rss, 1),
            "baseline_main_peak_rss_mib": round(threads_rss, 1),
            "sticky_over_baseline": round(ratio, 3),
            "isolation": "direct (restores the process after each invocation, then checks it)",
            "fork_mode_s": round(fork_s, 3),
            "fork_mode_runs_s": [round(s, 3) for s, _ in fork],
            "fork_mode_over_baseline": round(fork_s / threads_s, 3),
            "direct_ms_per_invocation_median": round(direct_inv_ms, 3),
            "fork_ms_per_invocation_median": round(fork_inv_ms, 3),
            "fork_cost_ms_per_invocation": round(fork_inv_ms - direct_inv_ms, 3),
            "in_process_ms_per_invocation": costs,
            "target_at_most": 1.5,
        },
    )
    print(f"  written: {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
