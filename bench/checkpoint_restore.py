"""Checkpoint-aware rule skipping on the claim-verification workflow.

Runs, in order, each in a fresh copy of workflows/claim-verification (``-j 2``, sticky
executor, greedy scheduler):

1. a full run without checkpoints (the reference);
2. the same full run with ``--sticky-checkpoints`` on an empty store (its extra time is the
   cost of computing keys and storing outputs);
3. a repeat at a second site (new path, no outputs, no .snakemake/) with the same store:
   everything restored; compared with Snakemake's own dry run at such a site;
4. a repeat at a third site with the verify script changed (a comment): all verify jobs
   rerun, while the report, whose inputs come out byte-identical, is restored.

Targets (issue #4): the restored repeat at least 20x faster than the full run; key overhead
under 5% of the run.

    python bench/checkpoint_restore.py           # 200 claims
    python bench/checkpoint_restore.py --quick   # 20 claims
"""

import argparse
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import ROOT, WORK, fresh_copy, write_result  # noqa: E402

WORKFLOW = ROOT / "workflows" / "claim-verification"


def run(wd: Path, *args: str) -> tuple[float, str]:
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        "--executor",
        "sticky",
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
    parser.add_argument("--quick", action="store_true", help="20 claims")
    parser.add_argument("--claims", type=int, default=None)
    args = parser.parse_args()
    n = args.claims or (20 if args.quick else 200)
    base = WORK / "checkpoint_restore"
    store = base / "store"
    shutil.rmtree(store, ignore_errors=True)
    config = ["--config", f"n_claims={n}"]
    ckpt = ["--sticky-checkpoints", str(store)]

    plain_s, _ = run(fresh_copy(WORKFLOW, base / "plain"), *config)
    print(f"  full run, no checkpoints      : {plain_s:7.2f} s", flush=True)
    full_s, out = run(fresh_copy(WORKFLOW, base / "site-a"), *config, *ckpt)
    print(f"  full run, storing checkpoints : {full_s:7.2f} s  {counts(out)}", flush=True)
    dry_s, _ = run(fresh_copy(WORKFLOW, base / "dry"), *config, "--dry-run")
    site_b = fresh_copy(WORKFLOW, base / "site-b")
    restored_s, out_b = run(site_b, *config, *ckpt)
    print(
        f"  second site, all restored     : {restored_s:7.2f} s  {counts(out_b)} "
        f"(dry run there: {dry_s:.2f} s)",
        flush=True,
    )
    identical = all(
        (base / "site-a" / "results" / p.relative_to(site_b / "results")).read_bytes()
        == p.read_bytes()
        for p in (site_b / "results").rglob("*")
        if p.is_file()
    )
    site_c = fresh_copy(WORKFLOW, base / "site-c")
    verify = site_c / "scripts" / "verify.py"
    verify.write_text(verify.read_text() + "\n# a comment: the code changed, the verdicts not\n")
    changed_s, out_c = run(site_c, *config, *ckpt)
    print(f"  third site, verify.py changed : {changed_s:7.2f} s  {counts(out_c)}", flush=True)

    speedup = full_s / restored_s
    overhead = (full_s - plain_s) / plain_s
    print(f"\ncheckpoint restore, claim verification with {n} claims")
    print(
        f"  restored repeat is {speedup:.1f}x faster than the full run (target >= 20x); "
        f"{restored_s - dry_s:+.2f} s vs Snakemake's dry run"
    )
    print(f"  key + store overhead on the first run: {overhead:+.1%} (target < 5%)")
    print(f"  outputs byte-identical at the second site: {identical}")
    print(f"  changed verify.py: {counts(out_c)[1]} job(s) ran, {counts(out_c)[0]} restored")
    path = write_result(
        "checkpoint_restore",
        {
            "claims": n,
            "quick": args.quick,
            "full_no_checkpoints_s": round(plain_s, 3),
            "full_storing_s": round(full_s, 3),
            "restored_second_site_s": round(restored_s, 3),
            "dry_run_s": round(dry_s, 3),
            "changed_verify_s": round(changed_s, 3),
            "restored_counts": counts(out_b),
            "changed_counts": counts(out_c),
            "speedup_restored_over_full": round(speedup, 2),
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
