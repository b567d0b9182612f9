"""The claim workload side by side with its peers (issue 29): sticky, Dask, Ray, the limit loop.

Every system verifies the same N claims of the claim-verification workflow, one claim per
unit of work (``batch_size=1``), with the same per-claim work (``claimcheck.features`` +
``predict`` + one verdict TSV written atomically) and two worker processes on this 2-core
machine, each loading MiniLM once:

- **sticky**: ``snakemake --executor sticky --scheduler incremental -j 2`` with
  ``--max-jobs-per-timespan 100000/1s`` (as ``profiles/local`` sets them), the registry's
  Snakemake, the isolation mode the workflow ships with (direct, with its check), target ``all
  --until verify`` (the N verify invocations; the report is not part of the peers' work);
- **dask**: a ``distributed.LocalCluster`` of 2 single-threaded worker processes with a
  ``WorkerPlugin`` that loads the model once per worker; one task per claim
  (``bench/_peer_runner.py``);
- **ray**: 2 actors (``num_cpus=1``) loading the model in ``__init__``; one call per claim,
  round robin;
- **limit**: 2 plain Python processes, each loading the model and looping over its share
  (``bench/_claim_limit.py``): no framework at all.

Each run is a fresh command, timed from launch to exit (start-up and model loads included).
Sizes run smallest first within a round, the systems in a rotating order, rounds repeated
(interleaved: the machine is shared). Every system's verdicts must equal the limit loop's, claim
by claim. Reported per size: median seconds of each system; the marginal cost per claim
between consecutive sizes, ``(t(n2) - t(n1)) / (n2 - n1)`` in ms (start-up cancels out);
sticky over dask and over the limit. Goal (issue 29): sticky <= dask and <= 1.3x the limit at
600 and 6,000 claims.

    python bench/peers.py                 # 200, 600, 6,000 claims, 2 rounds
    python bench/peers.py --quick         # 40 and 120 claims, 1 round, about a minute
    python bench/peers.py --sizes 200 600 --rounds 3 --systems sticky dask limit
    python bench/peers.py --floor         # + sticky's floor variants: peers_floor.json

``--floor`` adds three sticky variants that say where sticky's time goes (never shipped as
settings): **sticky_queued**, ``-j 4 --sticky-max-workers 2`` (Snakemake hands out two jobs
per worker, so a worker finds its next job queued when it replies: Snakemake's round trip is
off its path); **floor**, the shipped command with ``bench/_floor/sitecustomize.py`` on its
``PYTHONPATH`` (the workers inherit it), which execs every job after a worker's first bare
(no snapshot, fresh exit, restore or check: what no cut of the worker's own work can go
below); **floor_queued**, both.
"""

import argparse
import csv
import importlib.util
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).parent))  # this folder's helpers, then off sys.path
from _common import ROOT, WORK, fresh_copy, timed, write_result  # noqa: E402
from scale import RATE  # noqa: E402
from scale_claims import (  # noqa: E402
    STICKY,
    WORKFLOW,
    claims_table,
    read_verdicts,
    run_loop,
    table_text,
    test_ids,
)

sys.path.pop(0)

SYSTEMS = ("sticky", "dask", "ray", "limit")
FLOOR_SYSTEMS = ("sticky_queued", "floor", "floor_queued")
FLOOR_PATH = Path(__file__).parent / "_floor"  # its sitecustomize.py: measurement only
MODULES = {"dask": "distributed", "ray": "ray"}
GOAL_OVER_LIMIT = 1.3


def sticky_cmd(n: int, table: str, target: list[str], queued: bool = False) -> list[str]:
    jobs = ["-j", "4", "--sticky-max-workers", "2"] if queued else ["-j", "2"]
    return [
        sys.executable, "-m", "snakemake", *target,
        "--config", f"claims={table}", f"n_claims={n}", "batch_size=1",
        *STICKY, *RATE, *jobs, "--nocolor", "--quiet", "rules",
    ]  # fmt: skip


def is_sticky(system: str) -> bool:
    return system == "sticky" or system in FLOOR_SYSTEMS


def run_once(system: str, wd: Path, table: str, ids: list[str], timeout: float) -> float:
    """One fresh run of ``system`` on ``ids``; its wall seconds. Outputs of the previous run
    of any system are removed first."""
    for folder in ("results/verdicts", "peer_out", "loop_out"):
        shutil.rmtree(wd / folder, ignore_errors=True)
    if system == "limit":
        return run_loop(wd, wd / table, ids, 2)
    env = None
    if is_sticky(system):
        cmd = sticky_cmd(len(ids), table, ["all", "--until", "verify"], system.endswith("queued"))
        if system.startswith("floor"):
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(
                filter(None, [str(FLOOR_PATH), os.environ.get("PYTHONPATH")])
            )}  # fmt: skip
    else:
        ids_file = wd / "peer_ids.txt"
        ids_file.write_text("\n".join(ids) + "\n")
        cmd = [
            sys.executable, str(ROOT / "bench" / "_peer_runner.py"), system, str(wd),
            str(wd / "peer_out"), "--claims", str(wd / table), "--ids-file", str(ids_file),
        ]  # fmt: skip
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=wd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        sys.exit(f"peers: {system} at {len(ids)} claims timed out after {timeout:.0f} s")
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"peers: {system} failed\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return seconds


def verdicts_of(system: str, wd: Path) -> dict[str, str]:
    if is_sticky(system):
        return read_verdicts(sorted((wd / "results" / "verdicts").glob("*.tsv")))
    folder = {"limit": "loop_out"}.get(system, "peer_out")
    return read_verdicts(sorted((wd / folder).glob("*.tsv")))


def marginal_ms(sizes: list[int], seconds: dict[int, float]) -> dict[str, float]:
    """Cost per claim between consecutive sizes, in ms: start-up and loading cancel out."""
    return {
        f"{a}-{b}": round((seconds[b] - seconds[a]) / (b - a) * 1000, 2)
        for a, b in zip(sizes, sizes[1:], strict=False)
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="40 and 120 claims, 1 round")
    parser.add_argument("--sizes", type=int, nargs="+", default=None)
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument(
        "--systems", nargs="+", choices=SYSTEMS + FLOOR_SYSTEMS, default=list(SYSTEMS)
    )
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per run")
    parser.add_argument(
        "--floor",
        action="store_true",
        help="add sticky_queued, floor and floor_queued; write bench/results/peers_floor.json",
    )
    args = parser.parse_args()
    if args.floor:
        args.systems = [*args.systems, *(s for s in FLOOR_SYSTEMS if s not in args.systems)]
    sizes = sorted(args.sizes or ([40, 120] if args.quick else [200, 600, 6000]))
    rounds = args.rounds or (1 if args.quick else 2)
    systems, missing = [], {}
    for system in args.systems:
        module = MODULES.get(system)
        if module and importlib.util.find_spec(module) is None:
            missing[system] = f"{module} is not installed (pip install {module})"
            print(f"peers: {system} skipped: {missing[system]}", flush=True)
        else:
            systems.append(system)
    if "limit" not in systems:
        sys.exit("peers: the limit loop is the reference for every verdict: keep it")

    wd = fresh_copy(WORKFLOW, WORK / "peers")
    with open(WORKFLOW / "data" / "claims.tsv", newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    table = f"data/claims_{sizes[-1]}.tsv"
    generated = claims_table(rows, sizes[-1])
    (wd / table).write_text(table_text(generated), encoding="utf-8")
    all_ids = test_ids(generated)
    print("training the verdict head (not timed) ...", flush=True)
    timed(sticky_cmd(sizes[-1], table, ["results/head.npz"]), wd)

    times: dict[str, dict[int, list[float]]] = {s: {n: [] for n in sizes} for s in systems}
    mismatched: dict[str, list[str]] = {}
    reference: dict[str, str] = {}
    for r in range(rounds):
        for i, n in enumerate(sizes):
            shift = (r + i) % len(systems)
            for system in systems[shift:] + systems[:shift]:
                seconds = run_once(system, wd, table, all_ids[:n], args.timeout)
                times[system][n].append(seconds)
                found = verdicts_of(system, wd)
                if system == "limit":
                    reference = found
                else:
                    (wd / f"verdicts_{system}.tsv").write_text(
                        "".join(f"{k}\t{v}\n" for k, v in sorted(found.items()))
                    )
                print(f"round {r + 1}, {n:6d} claims: {system:6s} {seconds:7.1f} s", flush=True)
            for system in systems:
                if system == "limit":
                    continue
                lines = (wd / f"verdicts_{system}.tsv").read_text().splitlines()
                found = dict(line.split("\t", 1) for line in lines)
                bad = [c for c in all_ids[:n] if found.get(c) != reference.get(c)]
                bad += sorted(set(found) - set(all_ids[:n]))
                if bad:
                    mismatched.setdefault(system, []).extend(f"{n}:{c}" for c in bad[:5])

    medians = {s: {n: round(median(ts), 2) for n, ts in by_n.items()} for s, by_n in times.items()}
    result: dict[str, object] = {
        "workload": "claim-verification, batch_size=1, 2 worker processes, model loaded once each",
        "sizes": sizes,
        "rounds": rounds,
        "quick": args.quick,
        "skipped": missing,
        "seconds": {s: {str(n): ts for n, ts in by_n.items()} for s, by_n in times.items()},
        "median_s": {s: {str(n): t for n, t in by_n.items()} for s, by_n in medians.items()},
        "marginal_ms_per_claim": {s: marginal_ms(sizes, by_n) for s, by_n in medians.items()},
        "verdicts_identical_to_limit": not mismatched,
        "mismatches": mismatched,
    }
    ratios: dict[str, dict[str, float]] = {}
    for n in sizes:
        row = ratios[str(n)] = {}
        for variant in (s for s in systems if is_sticky(s)):
            for peer in ("dask", "ray", "limit"):
                if peer in medians:
                    row[f"{variant}_over_{peer}"] = round(medians[variant][n] / medians[peer][n], 3)
    result["ratios"] = ratios
    result["goal"] = f"sticky <= dask and <= {GOAL_OVER_LIMIT}x limit at 600 and 6000 claims"
    if "sticky" in medians:
        result["goal_met"] = {
            str(n): medians["sticky"][n] <= GOAL_OVER_LIMIT * medians["limit"][n]
            and ("dask" not in medians or medians["sticky"][n] <= medians["dask"][n])
            for n in sizes
            if n >= 600
        }
    print()
    print(f"{'claims':>7} " + " ".join(f"{s:>8}" for s in systems) + "   (median s)")
    for n in sizes:
        print(f"{n:7d} " + " ".join(f"{medians[s][n]:8.1f}" for s in systems))
    print("marginal ms per claim: " + "; ".join(
        f"{s} {result['marginal_ms_per_claim'][s]}" for s in systems  # type: ignore[index]
    ))  # fmt: skip
    print(f"ratios: {ratios}")
    print(f"verdicts identical to the limit loop's: {not mismatched}")
    path = write_result("peers_floor" if args.floor else "peers", result)
    print(f"written: {path}")
    shutil.rmtree(wd / "results" / "verdicts", ignore_errors=True)
    if os.environ.get("PEERS_KEEP") != "1":
        shutil.rmtree(wd, ignore_errors=True)


if __name__ == "__main__":
    main()
