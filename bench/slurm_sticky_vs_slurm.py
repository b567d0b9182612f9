"""Claim verification on the real local Slurm: one sbatch per job vs sticky pilot jobs.

``profiles/slurm`` (snakemake-executor-plugin-slurm: every job is its own sbatch job that
starts Python, imports torch and loads MiniLM) against ``profiles/slurm-sticky`` (pilot jobs
build the state once; with ``--sticky-max-pilots 2``, as many pilots as profiles/slurm runs
jobs at a time), the same N invocations each; reports wall time and the time to the first
verdict. Then a fault run: the sticky run again while one warm pilot (one that has built its
template) is ``scancel``ed every few seconds; reports invocations requeued, outputs lost
(verdicts missing or different from the fault-free run: must be 0) and the slowdown. Then a
mixed workflow: the same verifications plus one ``shell:`` job per verdict file,
``profiles/slurm`` against ``profiles/slurm-sticky`` as it comes (its site default of pilots;
the shell jobs are Slurm jobs of snakemake-executor-plugin-slurm in both runs).

Every run has a deadline (--deadline): a run that does not finish in time (e.g. Slurm
accounting down and a status check that never ends) is stopped, its Slurm jobs cancelled, and
the benchmark fails naming the run.

Needs the cluster of tests/slurm/start-cluster.sh. Target (issue #3): sticky >= 20x faster.

    python bench/slurm_sticky_vs_slurm.py           # 30 invocations; fault run 100; mixed 30
    python bench/slurm_sticky_vs_slurm.py --quick   # 2 invocations; fault run 16; mixed 2
"""

import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import ROOT, WORK, fresh_copy, snakemake, write_result  # noqa: E402

from snakemake_executor_plugin_sticky._metrics import read_records  # noqa: E402

WORKFLOW = ROOT / "workflows" / "claim-verification"
PROFILES = ROOT / "profiles"
# Slurm commands answer in seconds; one that does not is a fault of the cluster.
SLURM_COMMAND_TIMEOUT = 30
# The mixed workflow: one shell: job per verdict file (a Slurm job under both profiles).
MIXED_RULES = """

rule tidy:
    input:
        "results/verdicts/{batch}.tsv",
    output:
        "results/tidy/{batch}.tsv",
    shell:
        "sort {input} > {output}"


rule mixed:
    input:
        expand("results/tidy/{batch}.tsv", batch=sorted(BATCHES)),
        "results/report.md",
"""


def run_with_deadline(cmd: list[str], cwd: Path, deadline: float, what: str) -> float:
    """Run a Snakemake command; return its wall seconds. Past ``deadline`` seconds it is
    stopped (SIGTERM: Snakemake cancels its jobs; then SIGKILL), the Slurm jobs it started are
    cancelled, and the benchmark fails naming what it waited for."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        env={**os.environ},
    )
    try:
        out, _ = proc.communicate(timeout=deadline)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            out, _ = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
        cancelled = cancel_jobs_of(cwd, out)
        sys.exit(
            f"{what} did not finish within its deadline of {deadline:g} s (waited for: "
            f"{' '.join(cmd)} in {cwd}); it was stopped and its Slurm jobs "
            f"({', '.join(cancelled) or 'none left'}) cancelled. Is the cluster healthy "
            f"(sinfo, sacct)? Last output:\n{out[-2000:]}"
        )
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{what} failed ({' '.join(cmd)}):\n{out[-4000:]}")
    return seconds


def cancel_jobs_of(workdir: Path, output: str) -> list[str]:
    """scancel what a stopped run left in the queue: its pilots (named sticky-<run>) and the
    Slurm jobs of snakemake-executor-plugin-slurm (named by its run ID, printed at start)."""
    names = [f"sticky-{p.name}" for p in (workdir / ".snakemake" / "sticky").glob("*")]
    names += re.findall(r"SLURM run ID: (\S+)", output)
    cancelled = []
    for name in names:
        ids = slurm_command(["squeue", "-h", f"--name={name}", "-o", "%i"]).split()
        for job_id in ids:
            slurm_command(["scancel", job_id])
            cancelled.append(job_id)
    return cancelled


def slurm_command(cmd: list[str]) -> str:
    """A Slurm command's output ('' if it fails or does not answer in time)."""
    try:
        return subprocess.run(
            cmd, capture_output=True, text=True, timeout=SLURM_COMMAND_TIMEOUT
        ).stdout
    except subprocess.TimeoutExpired:
        return ""


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


def warm_pilots(workdir: Path) -> list[str]:
    """Slurm job ids of the run's pilots that have built their template and still run,
    oldest first (from the run's metrics, read through the executor's own reader)."""
    metrics = sorted((workdir / ".snakemake" / "sticky").glob("*/metrics.jsonl"))
    if not metrics:
        return []
    jobs: dict[str, str] = {}
    warm: list[str] = []
    for record in read_records(metrics[-1]):
        worker = record.get("worker")
        if record["event"] == "worker_started" and record.get("slurm_job"):
            jobs[worker] = record["slurm_job"]
        elif record["event"] == "state_built" and worker in jobs and worker not in warm:
            warm.append(worker)
        elif record["event"] in ("worker_lost", "worker_stop", "worker_ended") and worker in warm:
            warm.remove(worker)
    return [jobs[w] for w in warm]


def pilot_killer(workdir: Path, every: float, stop: threading.Event, killed: list[str]) -> None:
    """Every ``every`` seconds, scancel the oldest pilot of the run in ``workdir`` that has
    built its template (a preemption that takes warm state and the invocation in flight with
    it). A pilot still starting is spared: killing every pilot before it has loaded the model
    (about 6 s here with two building at once) would only test that a run which can make no
    progress fails."""
    while not stop.wait(every):
        for job in warm_pilots(workdir):
            if job not in killed:
                slurm_command(["scancel", job])
                killed.append(job)
                break


def run(
    name: str,
    profile: str,
    n: int,
    head: Path,
    deadline: float,
    kill_every: float = 0.0,
    extra: tuple[str, ...] = (),
    mixed: bool = False,
) -> dict:
    wd = fresh_copy(WORKFLOW, WORK / "slurm_sticky_vs_slurm" / name)
    if mixed:
        snakefile = wd / "Snakefile"
        snakefile.write_text(snakefile.read_text() + MIXED_RULES)
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
    target = ["mixed"] if mixed else []
    try:
        seconds = run_with_deadline(
            snakemake(
                *target,
                "--profile",
                str(PROFILES / profile),
                *extra,
                "--config",
                f"n_claims={n}",
                "batch_size=1",
            ),
            wd,
            deadline,
            f"the {name} run (profiles/{profile})",
        )
    finally:
        stop.set()
        box["stop"] = 1
        if killer:
            killer.join(timeout=2 * SLURM_COMMAND_TIMEOUT)
    result = {
        "seconds": seconds,
        "first_result_s": box.get("first"),
        "workdir": wd,
        "pilots_killed": len(killed),
    }
    metrics = sorted((wd / ".snakemake" / "sticky").glob("*/metrics.jsonl"))
    if metrics:
        records = read_records(metrics[-1])
        result["requeued"] = sum(1 for r in records if r["event"] == "requeued")
    return result


def verdicts(wd: Path, folder: str = "verdicts") -> dict[str, str]:
    return {p.name: p.read_text() for p in (wd / "results" / folder).glob("*.tsv")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--invocations", type=int, default=None)
    parser.add_argument("--fault-invocations", type=int, default=None)
    parser.add_argument("--mixed-invocations", type=int, default=None)
    parser.add_argument("--kill-every", type=float, default=3.0, help="seconds between kills")
    parser.add_argument(
        "--deadline", type=float, default=None, help="seconds one run may take (default: by size)"
    )
    args = parser.parse_args()
    n = args.invocations or (2 if args.quick else 30)
    n_fault = args.fault_invocations or (16 if args.quick else 100)
    n_mixed = args.mixed_invocations or (2 if args.quick else 30)
    # One sbatch job per invocation takes ~8 s here; allow 4x that, and 3 minutes to start.
    deadline = args.deadline or 180 + 30 * max(n, n_fault, 2 * n_mixed)
    try:
        sinfo = subprocess.run(["sinfo"], capture_output=True, timeout=SLURM_COMMAND_TIMEOUT)
    except subprocess.TimeoutExpired:
        sys.exit("sinfo did not answer within 30 s: is the Slurm controller running?")
    if sinfo.returncode != 0:
        sys.exit("no Slurm cluster answers: run tests/slurm/start-cluster.sh first")

    prep = fresh_copy(WORKFLOW, WORK / "slurm_sticky_vs_slurm" / "prep")
    run_with_deadline(
        snakemake("results/head.npz", "--executor", "sticky", "-j", "2"),
        prep,
        deadline,
        "training the verdict head (--executor sticky, local workers)",
    )
    head = prep / "results" / "head.npz"
    # As many pilots as profiles/slurm runs jobs at a time (its jobs: 2).
    two_pilots = ("--sticky-max-pilots", "2")

    sticky = run("sticky", "slurm-sticky", n, head, deadline, extra=two_pilots)
    print(
        f"  sticky pilots : {sticky['seconds']:7.2f} s, first result "
        f"{sticky['first_result_s']:.2f} s",
        flush=True,
    )
    stock = run("stock", "slurm", n, head, deadline)
    print(
        f"  sbatch per job: {stock['seconds']:7.2f} s, first result "
        f"{stock['first_result_s']:.2f} s",
        flush=True,
    )
    same = (
        verdicts(sticky["workdir"]) == verdicts(stock["workdir"])
        and len(verdicts(stock["workdir"])) == n
    )

    clean = run("fault-free", "slurm-sticky", n_fault, head, deadline, extra=two_pilots)
    faulty = run(
        "faults",
        "slurm-sticky",
        n_fault,
        head,
        deadline,
        kill_every=args.kill_every,
        extra=two_pilots,
    )
    expected, got = verdicts(clean["workdir"]), verdicts(faulty["workdir"])
    lost = sum(1 for k, v in expected.items() if got.get(k) != v)
    speedup = stock["seconds"] / sticky["seconds"]
    slowdown = faulty["seconds"] / clean["seconds"]
    print(
        f"  fault run     : fault-free {clean['seconds']:.2f} s, with faults "
        f"{faulty['seconds']:.2f} s, outputs lost {lost}",
        flush=True,
    )

    # The mixed workflow: profiles/slurm-sticky as it comes against profiles/slurm alone.
    mixed_sticky = run("mixed-sticky", "slurm-sticky", n_mixed, head, deadline, mixed=True)
    print(f"  mixed, sticky : {mixed_sticky['seconds']:7.2f} s", flush=True)
    mixed_stock = run("mixed-stock", "slurm", n_mixed, head, deadline, mixed=True)
    print(f"  mixed, stock  : {mixed_stock['seconds']:7.2f} s", flush=True)
    mixed_same = all(
        verdicts(mixed_sticky["workdir"], folder) == verdicts(mixed_stock["workdir"], folder)
        and len(verdicts(mixed_stock["workdir"], folder)) == n_mixed
        for folder in ("verdicts", "tidy")
    )
    mixed_speedup = mixed_stock["seconds"] / mixed_sticky["seconds"]
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
    print(
        f"\nfault run, {n_fault} invocations, one warm pilot scancelled every {args.kill_every:g} s"
    )
    print(
        f"  fault-free {clean['seconds']:.2f} s; with faults {faulty['seconds']:.2f} s "
        f"({slowdown:.2f}x); pilots killed {faulty['pilots_killed']}, invocations requeued "
        f"{faulty.get('requeued', 0)}, outputs lost {lost}"
    )
    print(f"\nmixed workflow, {n_mixed} verifications (sticky) + {n_mixed} shell jobs (Slurm jobs)")
    print(
        f"  profiles/slurm alone : {mixed_stock['seconds']:7.2f} s\n"
        f"  profiles/slurm-sticky: {mixed_sticky['seconds']:7.2f} s  "
        f"({mixed_speedup:.1f}x); outputs identical: {mixed_same}"
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
                "killed": "the oldest warm pilot (template built)",
                "fault_free_s": round(clean["seconds"], 3),
                "with_faults_s": round(faulty["seconds"], 3),
                "slowdown": round(slowdown, 3),
                "pilots_killed": faulty["pilots_killed"],
                "requeued": faulty.get("requeued", 0),
                "outputs_lost": lost,
            },
            "mixed": {
                "invocations": n_mixed,
                "shell_jobs": n_mixed,
                "slurm_profile_s": round(mixed_stock["seconds"], 3),
                "slurm_sticky_profile_s": round(mixed_sticky["seconds"], 3),
                "speedup": round(mixed_speedup, 2),
                "outputs_identical": mixed_same,
            },
            "deadline_per_run_s": deadline,
        },
    )
    print(f"  written: {path.relative_to(ROOT)}")
    if lost or not same or not mixed_same:
        sys.exit("outputs were lost or differ")


if __name__ == "__main__":
    main()
