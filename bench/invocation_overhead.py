"""Per-invocation cost of the sticky executor, against Snakemake's own fastest path.

N no-op jobs, ``-j 2``: (a) ``--executor sticky``, each job a ``script:`` invocation on a
warm worker; (b) the baseline, Snakemake's fastest path: the local executor running trivial
``run:`` jobs in threads (``--force-use-threads``), with no process per job. Both use the
greedy scheduler (the ILP scheduler's per-round cost would dominate both). Both include
Snakemake's own start-up, DAG building, scheduling and metadata writing, so the ratio shows
what the executor adds on top. Also reported: invocations per second and the peak memory
of the main Snakemake process.

Target (issue #2): sticky at most 1.5x the baseline's time for 2,000 invocations.

    python bench/invocation_overhead.py           # 2,000 invocations
    python bench/invocation_overhead.py --quick   # 300 invocations
"""

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import ROOT, WORK, timed, write_result  # noqa: E402

STICKY = """
N = int(config["count"])
rule all:
    input: expand("out/{i}.txt", i=range(N))
rule noop:
    output: "out/{i}.txt"
    resources: sticky="noop"
    script: "noop.py"
"""
THREADS = """
N = int(config["count"])
rule all:
    input: expand("out/{i}.txt", i=range(N))
rule noop:
    output: "out/{i}.txt"
    run:
        open(output[0], "w").close()
"""


def prepare(name: str, snakefile: str) -> Path:
    wd = WORK / "invocation_overhead" / name
    if wd.exists():
        import shutil

        shutil.rmtree(wd)
    wd.mkdir(parents=True)
    (wd / "Snakefile").write_text(snakefile)
    (wd / "noop.py").write_text('open(snakemake.output[0], "w").close()\n')
    (wd / "sticky_templates.py").write_text(
        "from stickyinvoc import template\n\n\n@template\ndef noop():\n    return None\n"
    )
    return wd


def run(name: str, snakefile: str, n: int, executor_args: list[str]) -> tuple[float, float]:
    """Wall seconds and main-process peak RSS (MiB) of one fresh run."""
    wd = prepare(name, snakefile)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="300 invocations, one repeat")
    parser.add_argument("--invocations", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=None, help="default 3 (1 with --quick)")
    args = parser.parse_args()
    n = args.invocations or (300 if args.quick else 2000)
    repeats = args.repeats or (1 if args.quick else 3)
    sticky, threads = [], []
    for i in range(repeats):  # interleaved: machine noise hits both alike
        sticky.append(run("sticky", STICKY, n, ["--executor", "sticky"]))
        threads.append(run("threads", THREADS, n, ["--executor", "local", "--force-use-threads"]))
        print(
            f"  repeat {i + 1}: sticky {sticky[-1][0]:.2f} s, threads {threads[-1][0]:.2f} s",
            flush=True,
        )
    sticky_s = statistics.median(s for s, _ in sticky)
    threads_s = statistics.median(s for s, _ in threads)
    sticky_rss = max(r for _, r in sticky)
    threads_rss = max(r for _, r in threads)
    ratio = sticky_s / threads_s
    print(f"\n{n} no-op invocations, -j 2, --scheduler greedy (median of {repeats})")
    print(
        f"  sticky executor         : {sticky_s:7.2f} s  {n / sticky_s:7.1f} invocations/s  "
        f"peak RSS of main process {sticky_rss:6.1f} MiB"
    )
    print(
        f"  local, run: in threads  : {threads_s:7.2f} s  {n / threads_s:7.1f} jobs/s         "
        f"peak RSS of main process {threads_rss:6.1f} MiB"
    )
    print(f"  sticky / baseline       : {ratio:7.2f}x  (target <= 1.5x)")
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
            "target_at_most": 1.5,
        },
    )
    print(f"  written: {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
