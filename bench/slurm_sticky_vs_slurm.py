"""Claim verification on the real local Slurm: one sbatch per job vs sticky pilot jobs.

``profiles/slurm`` (snakemake-executor-plugin-slurm: every job is its own sbatch job that
starts Python, imports torch and loads MiniLM) against ``profiles/slurm-sticky`` (pilot jobs
build the state once), the same N invocations each; reports wall time and the time to the
first verdict. Then a fault run: the sticky run again while one running pilot is
``scancel``ed every few seconds; reports invocations requeued, outputs lost (verdicts missing
or different from the fault-free run: must be 0) and the slowdown.

Needs the cluster of tests/slurm/start-cluster.sh. Target (issue #3): sticky >= 20x faster.

    python bench/slurm_sticky_vs_slurm.py           # 30 invocations; fault run with 100
    python bench/slurm_sticky_vs_slurm.py --quick   # 2 invocations; fault run with 16
"""

import argparse
import json
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import ROOT, WORK, fresh_copy, snakemake, timed, write_result  # noqa: E402

WORKFLOW = ROOT / "workflows" / "claim-verification"
PROFILES = ROOT / "profiles"


def first_result_watch(folder: Path, start: float, box: dict[str, float]) -> threading.Thread:
    def watch() -> None:
        while "first" not in box:
            if folder.exists() and any(folder.iterdir()):
                box["first"] = time.perf_counter() - start
                return
            time.sleep(0.02)
            if box.get("stop"):
                return

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def pilot_killer(workdir: Path, every: float, stop: threading.Event, killed: list[str]) -> None:
    """scancel one running pilot of the run in ``workdir`` every ``every`` seconds."""
    while not stop.wait(every):
        runs = sorted((workdir / ".snakemake" / "sticky").glob("*"))
        if not runs:
            continue
        out = subprocess.run(
            ["squeue", "-h", "-t", "RUNNING", f"--name=sticky-{runs[-1].name}", "-o", "%i"],
            capture_output=True,
            text=True,
        ).stdout.split()
        if out:
            subprocess.run(["scancel", out[0]], capture_output=True)
            killed.append(out[0])


def run(name: str, profile: str, n: int, head: Path, kill_every: float = 0.0) -> dict:
    wd = fresh_copy(WORKFLOW, WORK / "slurm_sticky_vs_slurm" / name)
    (wd / "results").mkdir()
    shutil.copy2(head, wd / "results" / "head.npz")
    box: dict[str, float] = {}
    stop, killed = threading.Event(), []
    start = time.perf_counter()
    first_result_watch(wd / "results" / "verdicts", start, box)
    killer = None
    if kill_every:
        killer = threading.Thread(target=pilot_killer, args=(wd, kill_every, stop, killed))
        killer.start()
    seconds = timed(
        snakemake(
            "--profile", str(PROFILES / profile), "--config", f"n_claims={n}", "batch_size=1"
        ),
        wd,
    )
    stop.set()
    box["stop"] = 1
    if killer:
        killer.join()
    result = {
        "seconds": seconds,
        "first_result_s": box.get("first"),
        "workdir": wd,
        "pilots_killed": len(killed),
    }
    metrics = sorted((wd / ".snakemake" / "sticky").glob("*/metrics.jsonl"))
    if metrics:
        records = [json.loads(x) for x in metrics[-1].read_text().splitlines()]
        result["requeued"] = sum(1 for r in records if r["event"] == "requeued")
    return result


def verdicts(wd: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in (wd / "results" / "verdicts").glob("*.tsv")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--invocations", type=int, default=None)
    parser.add_argument("--fault-invocations", type=int, default=None)
    parser.add_argument("--kill-every", type=float, default=3.0, help="seconds between kills")
    args = parser.parse_args()
    n = args.invocations or (2 if args.quick else 30)
    n_fault = args.fault_invocations or (16 if args.quick else 100)
    if subprocess.run(["sinfo"], capture_output=True).returncode != 0:
        sys.exit("no Slurm cluster answers: run tests/slurm/start-cluster.sh first")

    prep = fresh_copy(WORKFLOW, WORK / "slurm_sticky_vs_slurm" / "prep")
    timed(snakemake("results/head.npz", "--executor", "sticky", "-j", "2"), prep)
    head = prep / "results" / "head.npz"

    sticky = run("sticky", "slurm-sticky", n, head)
    print(
        f"  sticky pilots : {sticky['seconds']:7.2f} s, first result "
        f"{sticky['first_result_s']:.2f} s",
        flush=True,
    )
    stock = run("stock", "slurm", n, head)
    print(
        f"  sbatch per job: {stock['seconds']:7.2f} s, first result "
        f"{stock['first_result_s']:.2f} s",
        flush=True,
    )
    same = (
        verdicts(sticky["workdir"]) == verdicts(stock["workdir"])
        and len(verdicts(stock["workdir"])) == n
    )

    clean = run("fault-free", "slurm-sticky", n_fault, head)
    faulty = run("faults", "slurm-sticky", n_fault, head, kill_every=args.kill_every)
    expected, got = verdicts(clean["workdir"]), verdicts(faulty["workdir"])
    lost = sum(1 for k, v in expected.items() if got.get(k) != v)
    speedup = stock["seconds"] / sticky["seconds"]
    slowdown = faulty["seconds"] / clean["seconds"]
    print(f"\nclaim verification on Slurm, {n} invocations, 2 at a time")
    print(
        f"  one sbatch per job (profiles/slurm)     : {stock['seconds']:7.2f} s  "
        f"(first result after {stock['first_result_s']:.2f} s)"
    )
    print(
        f"  sticky pilots (profiles/slurm-sticky)   : {sticky['seconds']:7.2f} s  "
        f"(first result after {sticky['first_result_s']:.2f} s)"
    )
    print(f"  sticky speedup: {speedup:.1f}x (target >= 20x); verdicts identical: {same}")
    print(f"\nfault run, {n_fault} invocations, one pilot scancelled every {args.kill_every:g} s")
    print(
        f"  fault-free {clean['seconds']:.2f} s; with faults {faulty['seconds']:.2f} s "
        f"({slowdown:.2f}x); pilots killed {faulty['pilots_killed']}, invocations requeued "
        f"{faulty.get('requeued', 0)}, outputs lost {lost}"
    )
    path = write_result(
        "slurm_sticky_vs_slurm",
        {
            "invocations": n,
            "quick": args.quick,
            "sbatch_per_job_s": round(stock["seconds"], 3),
            "sbatch_per_job_first_result_s": round(stock["first_result_s"] or -1, 3),
            "sticky_s": round(sticky["seconds"], 3),
            "sticky_first_result_s": round(sticky["first_result_s"] or -1, 3),
            "speedup": round(speedup, 2),
            "target_speedup_at_least": 20,
            "verdicts_identical": same,
            "fault_run": {
                "invocations": n_fault,
                "kill_every_s": args.kill_every,
                "fault_free_s": round(clean["seconds"], 3),
                "with_faults_s": round(faulty["seconds"], 3),
                "slowdown": round(slowdown, 3),
                "pilots_killed": faulty["pilots_killed"],
                "requeued": faulty.get("requeued", 0),
                "outputs_lost": lost,
            },
        },
    )
    print(f"  written: {path.relative_to(ROOT)}")
    if lost or not same:
        sys.exit("outputs were lost or differ")


if __name__ == "__main__":
    main()
