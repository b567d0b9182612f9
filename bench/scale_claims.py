"""Claim verification at paper scale (issue 17): N claims, one sticky invocation each.

The claim-verification workflow (workflows/claim-verification: the MiniLM encoder in the
sticky template ``minilm``, a trained verdict head) verifies N claims with ``batch_size=1``,
under ``--executor sticky --scheduler incremental -j 2`` and the raised rate limit of
bench/scale.py. Against it, the limit loop: the same inferences with no Snakemake at all,
``-j`` plain Python processes (bench/_claim_limit.py), each loading the encoder once and
verifying its share of the claims in a loop, writing the same verdict files. Verdicts must be
identical for every claim.

The dataset has 1,053 test claims; N claims are a generated table (``claims_table``): the
train rows unchanged (the head trains on them, so it is the head of the workflow's own
dataset), then N test rows cycling over the first ``--distinct`` test claims in order, the
first occurrence keeping its id and claim k > 0 of the same source taking ``<id>r<k>``
(``c0001r1``). Every claim is its own job, output file (``results/verdicts/b<NNNN>.tsv``) and
inference: the workers cache the head and the table, never an embedding.

Reported: wall seconds of the Snakemake run (the head is trained beforehand, outside the
timing; the run is the N verify invocations and the report) and of the loop (process start
and model load included in both), inferences per second of each, sticky / loop, and the
per-invocation overhead: (sticky - loop) / N, in wall milliseconds per claim at ``-j 2``;
the main Snakemake process's peak RSS. Runs are kept in bench/results/scale_claims.json per
(variant, n) as in bench/scale.py.

    python bench/scale_claims.py --quick                   # 300 claims (150 distinct), ~2 min
    python bench/scale_claims.py --claims 20000            # the paper-scale point
    python bench/scale_claims.py --claims 20000 --upstream-patch
"""

import argparse
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).parent))  # this folder's helpers, then off sys.path
from _common import RESULTS, ROOT, WORK, fresh_copy, timed, write_result  # noqa: E402
from scale import DATE_FORMAT, RATE, merge_runs, runs_of_file  # noqa: E402

sys.path.pop(0)  # bench/distea.py and bench/nbrewind.py would shadow the packages

WORKFLOW = ROOT / "workflows" / "claim-verification"
COLUMNS = ("claim_id", "split", "label", "claim", "evidence")
QUICK_CLAIMS, QUICK_DISTINCT = 300, 150
STICKY = ["--executor", "sticky", "--scheduler", "incremental"]


def claims_table(
    rows: list[dict[str, str]], n: int, distinct: Optional[int] = None
) -> list[dict[str, str]]:
    """The generated dataset: every non-test row as it is, then ``n`` test rows cycling over
    the first ``distinct`` test claims (all by default); repeat k > 0 of a claim gets the id
    ``<id>r<k>``, the rest of the row unchanged."""
    tests = [r for r in rows if r["split"] == "test"]
    if distinct is not None:
        if not 1 <= distinct <= len(tests):
            raise ValueError(
                f"--distinct must be 1..{len(tests)} (the test claims), not {distinct}"
            )
        tests = tests[:distinct]
    if n < 1 or not tests:
        raise ValueError(f"need at least one claim and one test row (n={n})")
    out = [r for r in rows if r["split"] != "test"]
    for i in range(n):
        source, k = tests[i % len(tests)], i // len(tests)
        out.append({**source, "claim_id": source["claim_id"] + (f"r{k}" if k else "")})
    return out


def source_id(claim_id: str) -> str:
    """The original claim a generated id repeats (``c0001r3`` -> ``c0001``)."""
    return claim_id.split("r", 1)[0]


def table_text(rows: list[dict[str, str]]) -> str:
    """The rows as the workflow's TSV (same columns and dialect as data/claims.tsv)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, COLUMNS, delimiter="\t", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def test_ids(rows: list[dict[str, str]]) -> list[str]:
    return [r["claim_id"] for r in rows if r["split"] == "test"]


def split_ids(ids: list[str], processes: int) -> list[list[str]]:
    """Contiguous shares, as even as possible, for the limit loop's processes."""
    size, extra = divmod(len(ids), processes)
    shares, start = [], 0
    for p in range(processes):
        end = start + size + (1 if p < extra else 0)
        shares.append(ids[start:end])
        start = end
    return [s for s in shares if s]


def verdict_mismatches(ids: list[str], sticky: dict[str, str], loop: dict[str, str]) -> list[str]:
    """Claims whose verdict (predicted label and confidence) differs between the two runs or
    is missing from either, and verdicts for claims that were not asked."""
    bad = [i for i in ids if i not in sticky or i not in loop or sticky[i] != loop[i]]
    asked = set(ids)
    return bad + sorted((set(sticky) | set(loop)) - asked)


def figures(n: int, sticky_s: float, loop_s: float) -> dict[str, float]:
    """Inferences per second of each, sticky / loop, and the overhead per claim (wall ms)."""
    return {
        "sticky_inferences_per_s": round(n / sticky_s, 2),
        "loop_inferences_per_s": round(n / loop_s, 2),
        "sticky_over_loop": round(sticky_s / loop_s, 3),
        "overhead_ms_per_claim": round((sticky_s - loop_s) / n * 1000, 3),
    }


def read_verdicts(paths: list[Path]) -> dict[str, str]:
    """claim_id -> 'predicted<TAB>confidence' over the given verdict files."""
    found: dict[str, str] = {}
    for path in paths:
        with path.open(encoding="utf-8") as f:
            for row in csv.DictReader(f, delimiter="\t"):
                found[row["claim_id"]] = f"{row['predicted']}\t{row['confidence']}"
    return found


def snakemake_cmd(
    runner: str, rss_file: Path, jobs: int, n: int, table: str, target: str
) -> list[str]:
    # The target and --config first: --quiet takes a list and would swallow them.
    return [
        sys.executable, str(ROOT / "bench" / runner), str(rss_file), target,
        "--config", f"claims={table}", f"n_claims={n}", "batch_size=1",
        *STICKY, *RATE, "-j", str(jobs), "--nocolor", "--quiet", "rules",
    ]  # fmt: skip


def run_loop(wd: Path, table: Path, ids: list[str], processes: int) -> float:
    out = wd / "loop_out"
    shutil.rmtree(out, ignore_errors=True)
    id_files = []
    for p, share in enumerate(split_ids(ids, processes)):
        id_files.append(wd / f"loop_ids_{p}.txt")
        id_files[-1].write_text("\n".join(share) + "\n")
    start = time.perf_counter()
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "bench" / "_claim_limit.py"),
                str(wd),
                str(out),
                "--claims",
                str(table),
                "--ids-file",
                str(f),
            ]  # fmt: skip
        )
        for f in id_files
    ]
    if any(p.wait() != 0 for p in procs):
        sys.exit("the limit loop failed")
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_CLAIMS} claims")
    parser.add_argument("--claims", type=int, default=None, help="N (default 20000)")
    parser.add_argument(
        "--distinct",
        type=int,
        default=None,
        help="distinct source claims to cycle over (default: all 1053 test claims; "
        f"--quick: {QUICK_DISTINCT}, so that repeats are exercised)",
    )
    parser.add_argument("--jobs", type=int, default=2, help="-j, and the loop's processes")
    parser.add_argument(
        "--upstream-patch",
        action="store_true",
        help="run Snakemake with the scheduling patch proposed upstream (bench/scale.py's)",
    )
    parser.add_argument("--timeout", type=float, default=7200, help="seconds for the run")
    args = parser.parse_args()
    n = args.claims or (QUICK_CLAIMS if args.quick else 20_000)
    distinct = args.distinct or (QUICK_DISTINCT if args.quick else None)
    variant = "sticky+incremental" + ("+patch" if args.upstream_patch else "")
    runner = "_patched_snakemake.py" if args.upstream_patch else "_peak_rss.py"

    wd = fresh_copy(WORKFLOW, WORK / "scale_claims")
    with open(WORKFLOW / "data" / "claims.tsv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    try:
        generated = claims_table(rows, n, distinct)
    except ValueError as e:
        sys.exit(f"scale_claims: {e}")
    table = f"data/claims_{n}.tsv"
    (wd / table).write_text(table_text(generated), encoding="utf-8")
    ids = test_ids(generated)
    rss_file = wd / "peak_rss_kib"
    print(f"{n} claims ({len(set(map(source_id, ids)))} distinct) in {wd}", flush=True)
    print("training the verdict head (not timed) ...", flush=True)
    timed(snakemake_cmd(runner, rss_file, args.jobs, n, table, "results/head.npz"), wd)

    print(f"sticky run: {n} invocations, -j {args.jobs} ...", flush=True)
    cmd = snakemake_cmd(runner, rss_file, args.jobs, n, table, "all")
    load = round(os.getloadavg()[0], 2)
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=wd, capture_output=True, text=True, timeout=args.timeout)
    except subprocess.TimeoutExpired:
        sys.exit(f"the sticky run timed out after {args.timeout:.0f} s")
    sticky_s = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"the sticky run failed\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    rss = int(rss_file.read_text()) / 1024
    verdict_files = sorted((wd / "results" / "verdicts").glob("*.tsv"))
    if len(verdict_files) != n:
        sys.exit(f"expected {n} verdict files, found {len(verdict_files)}")
    print(f"  sticky: {sticky_s:8.1f} s", flush=True)

    print(f"limit loop: {args.jobs} processes, encoder loaded once each ...", flush=True)
    loop_s = run_loop(wd, wd / table, ids, args.jobs)
    print(f"  loop  : {loop_s:8.1f} s", flush=True)

    sticky_v = read_verdicts(verdict_files)
    loop_v = read_verdicts(sorted((wd / "loop_out").glob("*.tsv")))
    bad = verdict_mismatches(ids, sticky_v, loop_v)
    report = json.loads((wd / "results" / "report.json").read_text())
    result = {
        "variant": variant,
        "n": n,
        "date": time.strftime(DATE_FORMAT),
        "load_avg_1m_at_start": load,
        "distinct_claims": len(set(map(source_id, ids))),
        "jobs": args.jobs,
        "sticky_s": round(sticky_s, 2),
        "loop_s": round(loop_s, 2),
        **figures(n, sticky_s, loop_s),
        "main_peak_rss_mib": round(rss, 1),
        "verdicts_checked": len(ids),
        "verdicts_identical": not bad,
        "accuracy": report["accuracy"],
    }
    for key in (
        "sticky_inferences_per_s",
        "loop_inferences_per_s",
        "sticky_over_loop",
        "overhead_ms_per_claim",
        "main_peak_rss_mib",
        "verdicts_identical",
    ):
        print(f"  {key:<24} {result[key]}")
    previous = RESULTS / "scale_claims.json"
    kept = runs_of_file(json.loads(previous.read_text())) if previous.exists() else []
    path = write_result(
        "scale_claims",
        {
            "batch_size": 1,
            "rate": RATE[1],
            "loop": f"{args.jobs} processes (as -j), each loading the encoder once",
            "runs": merge_runs(kept, [result]),
        },
    )
    print(f"  written (runs kept per variant and n): {path.relative_to(ROOT)}")
    shutil.rmtree(wd / "results" / "verdicts", ignore_errors=True)
    shutil.rmtree(wd / "loop_out", ignore_errors=True)
    if bad:
        sys.exit(f"verdicts differ between sticky and the loop for {len(bad)} claims: {bad[:5]}")


if __name__ == "__main__":
    main()
