"""Checkpoint-aware rule skipping on the claim-verification workflow.

Runs, each in a fresh copy of workflows/claim-verification (``-j 2``, greedy scheduler):

1. full runs without checkpoints and with ``--sticky-checkpoints`` on an empty store,
   interleaved in pairs (the median ratio is the cost of computing keys and storing);
2. a repeat at a second site (new path, no outputs, no .snakemake/) with the same store:
   everything restored; compared with Snakemake's own dry run at such a site;
3. a repeat at a third site with the verify script changed (a comment): all verify jobs
   rerun, while the report, whose inputs come out byte-identical, is restored;
4. (full run only) the same workflow under ``--executor local``: the create-destroy full
   run that checkpoints save users from.

Targets (issue #4, kept by issue #13): the restored repeat costs at most 1.3x Snakemake's own
dry run (the dry run plus the copies), and is at least 20x faster than the full run; key +
store overhead under 5% of the run.

    python bench/checkpoint_restore.py           # 200 claims, 3 pairs
    python bench/checkpoint_restore.py --quick   # 20 claims, 1 pair, no local baseline
"""

import argparse
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).parent))
from _common import ROOT, WORK, fresh_copy, write_result  # noqa: E402

WORKFLOW = ROOT / "workflows" / "claim-verification"


def run(wd: Path, *args: str, executor: str = "sticky") -> tuple[float, str]:
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        "--executor",
        executor,
        "-j",
        "2",
        *args,
        "--scheduler",
        "greedy",
        "--nocolor",
    ]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=wd, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"failed in {wd}:\n{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
    return seconds, proc.stdout + proc.stderr


def counts(output: str) -> tuple[int, int]:
    m = re.search(r"checkpoints: (\d+) job\(s\) restored, (\d+) stored", output)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 claims, one pair")
    parser.add_argument("--claims", type=int, default=None)
    parser.add_argument(
        "--no-local-baseline", action="store_true", help="skip the --executor local run"
    )
    args = parser.parse_args()
    n = args.claims or (20 if args.quick else 200)
    pairs = 1 if args.quick else 3
    base = WORK / "checkpoint_restore"
    config = ["--config", f"n_claims={n}"]

    plain, storing = [], []
    for i in range(pairs):
        plain_s, _ = run(fresh_copy(WORKFLOW, base / "plain"), *config)
        store_i = base / f"store-{i}"
        shutil.rmtree(store_i, ignore_errors=True)
        full_s, out = run(
            fresh_copy(WORKFLOW, base / f"site-a-{i}"),
            *config,
            "--sticky-checkpoints",
            str(store_i),
        )
        plain.append(plain_s)
        storing.append(full_s)
        print(
            f"  pair {i + 1}: full run {plain_s:6.2f} s, storing checkpoints {full_s:6.2f} s "
            f"{counts(out)}",
            flush=True,
        )
    store = base / "store-0"
    ckpt = ["--sticky-checkpoints", str(store)]
    dry, restored = [], []
    for _ in range(pairs):
        dry_s, _ = run(fresh_copy(WORKFLOW, base / "dry"), *config, "--dry-run")
        site_b = fresh_copy(WORKFLOW, base / "site-b")
        restored_s, out_b = run(site_b, *config, *ckpt)
        dry.append(dry_s)
        restored.append(restored_s)
        print(
            f"  second site, all restored: {restored_s:6.2f} s {counts(out_b)}; "
            f"dry run there: {dry_s:.2f} s",
            flush=True,
        )
    identical = all(
        (base / "site-a-0" / "results" / p.relative_to(site_b / "results")).read_bytes()
        == p.read_bytes()
        for p in (site_b / "results").rglob("*")
        if p.is_file()
    )
    site_c = fresh_copy(WORKFLOW, base / "site-c")
    verify = site_c / "scripts" / "verify.py"
    verify.write_text(verify.read_text() + "\n# a comment: the code changed, the verdicts not\n")
    changed_s, out_c = run(site_c, *config, *ckpt)
    print(f"  third site, verify.py changed: {changed_s:6.2f} s {counts(out_c)}", flush=True)
    local_s = None
    if not (args.quick or args.no_local_baseline):
        local_s, _ = run(fresh_copy(WORKFLOW, base / "local"), *config, executor="local")
        print(f"  full run, --executor local: {local_s:6.2f} s", flush=True)

    full_s, restored_s, dry_s = median(plain), median(restored), median(dry)
    overhead = median(s / p for s, p in zip(storing, plain, strict=True)) - 1
    over_dry = median(r / d for r, d in zip(restored, dry, strict=True))
    speedup = full_s / restored_s
    print(f"\ncheckpoint restore, claim verification with {n} claims (medians of {pairs})")
    print(
        f"  restored repeat {restored_s:.2f} s vs Snakemake's dry run {dry_s:.2f} s "
        f"({restored_s - dry_s:+.2f} s, {over_dry:.2f}x, median of the pairs; target <= 1.3x)"
    )
    print(f"  {speedup:.1f}x faster than the sticky full run {full_s:.2f} s (target >= 20x)")
    if local_s is not None:
        print(f"  {local_s / restored_s:.1f}x faster than the local full run {local_s:.2f} s")
    print(f"  key + store overhead on the first run: {overhead:+.1%} (target < 5%)")
    print(f"  outputs byte-identical at the second site: {identical}")
    print(f"  changed verify.py: {counts(out_c)[1]} job(s) ran, {counts(out_c)[0]} restored")
    path = write_result(
        "checkpoint_restore",
        {
            "claims": n,
            "quick": args.quick,
            "pairs": pairs,
            "full_no_checkpoints_s": [round(x, 3) for x in plain],
            "full_storing_s": [round(x, 3) for x in storing],
            "restored_second_site_s": [round(x, 3) for x in restored],
            "dry_run_s": [round(x, 3) for x in dry],
            "changed_verify_s": round(changed_s, 3),
            "local_executor_full_s": None if local_s is None else round(local_s, 3),
            "restored_counts": counts(out_b),
            "changed_counts": counts(out_c),
            "restored_minus_dry_run_s": round(restored_s - dry_s, 3),
            "restored_over_dry_run": round(over_dry, 3),
            "target_restored_over_dry_run_at_most": 1.3,
            "speedup_restored_over_sticky_full": round(speedup, 2),
            "speedup_restored_over_local_full": (
                None if local_s is None else round(local_s / restored_s, 1)
            ),
            "target_speedup_at_least": 20,
            "key_overhead_fraction": round(overhead, 4),
            "target_overhead_below": 0.05,
            "outputs_identical": identical,
        },
    )
    print(f"  written: {path.relative_to(ROOT)}")
    if not identical:
        sys.exit("restored outputs differ")


if __name__ == "__main__":
    main()
