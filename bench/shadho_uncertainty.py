"""Which uncertainty term SHADHO's ranking should use: an ablation on bench/shadho.py's simulator.

SHADHO's Borda ranking orders sub-spaces by complexity, performance and uncertainty
(snakemake_shadho._ranking). Issue 16 asked for an uncertainty term "justified by evidence".
This runs SHADHO's search (in rounds, the barrier design; and without rounds, AsyncSearch)
with each candidate term in place of the shipped one, on the same pools of really evaluated
configurations, the same simulated cluster and the same paired seeds:

- ``bootstrap_sd_of_best`` (shipped): the exact bootstrap standard deviation of the best loss;
- ``sem``: the standard error of the mean loss (the term before, which one catastrophic loss
  inflates);
- ``none``: no uncertainty vote (every explored sub-space ties on it).

Reported per term and budget: the median best loss at budget, how many seeds reached the
target (the pools' best loss), and the paired comparison against the shipped term (mean
difference with its one-sided 95% bootstrap upper bound, Wilcoxon p, better/equal/worse).
Search quality only: the cluster has no overheads, so time is trials, not bookkeeping.

    python bench/shadho_uncertainty.py            # 20 seeds, budgets 120 and 60
    python bench/shadho_uncertainty.py --quick    # 3 seeds, budget 60, small pools
"""

import argparse
import math
import statistics
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import shadho as bench  # noqa: E402  (bench/shadho.py: spec, pools, cluster of the benchmark)
from _common import write_result  # noqa: E402

from snakemake_shadho import _ranking  # noqa: E402
from snakemake_shadho import _simulate as sim  # noqa: E402

SHIPPED = _ranking.best_loss_spread


def _sem(losses: Any) -> float:
    x = np.asarray(losses, dtype=float)
    return float(x.std(ddof=1) / math.sqrt(len(x))) if len(x) >= 2 else 0.0


def _none(losses: Any) -> float:
    return 0.0


TERMS = {"bootstrap_sd_of_best": SHIPPED, "sem": _sem, "none": _none}
SEARCHES = ("shadho", "shadho_async")


def run_one(job: dict[str, Any]) -> dict[str, Any]:
    """Every term x search on one seed and budget: each search's best loss."""
    spec = bench.make_spec(job["options"])
    pool = bench.make_pool(spec, job["entries"])
    out: dict[str, Any] = {}
    for term, fn in TERMS.items():
        _ranking.best_loss_spread = fn  # subspace_stats looks it up at call time
        try:
            rounds, seed = job["budget"] // bench.ROUND_SIZE, job["seed"]
            for search in SEARCHES:
                if search == "shadho":
                    r = sim.simulate_shadho(spec, pool, rounds, seed)
                else:
                    r = sim.simulate_shadho_async(spec, pool, job["budget"], seed)
                out[f"{search}/{term}"] = {
                    "best_loss": r.best_loss(),
                    "cnn_trials": sum(t.subspace == "cnn" for t in r.trials),
                }
        finally:
            _ranking.best_loss_spread = SHIPPED
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="3 seeds, budget 60, pools of 20")
    p.add_argument("--seeds", type=int, default=None, help="paired seeds (default 20)")
    p.add_argument("--jobs", type=int, default=2, help="worker processes")
    args = p.parse_args()
    seeds = args.seeds or (3 if args.quick else 20)
    budgets = (60,) if args.quick else (120, 60)
    options = bench.workflow_options()
    spec = bench.make_spec(options)
    entries = bench.pool_entries(spec, 20 if args.quick else 60)
    target = min(r["loss"] for rows in entries.values() for r in rows)
    result: dict[str, Any] = {
        "quick": args.quick,
        "seeds": seeds,
        "terms": list(TERMS),
        "searches": list(SEARCHES),
        "target_loss": target,
        "target_rule": "the pools' best loss",
        "cluster": bench.HARDWARE,
        "overheads": "none (search quality only)",
        "budgets": {},
    }
    for budget in budgets:
        work = [
            {"options": options, "entries": entries, "seed": s, "budget": budget}
            for s in range(seeds)
        ]
        with ProcessPoolExecutor(args.jobs) as ex:
            per_seed = list(ex.map(run_one, work))
        table: dict[str, Any] = {}
        for key in per_seed[0]:
            losses = [s[key]["best_loss"] for s in per_seed]
            table[key] = {
                "best_loss_median": statistics.median(losses),
                "best_loss_mean": statistics.mean(losses),
                "reached_target": sum(v <= target for v in losses),
                "cnn_trials_median": statistics.median(s[key]["cnn_trials"] for s in per_seed),
                "best_loss_per_seed": losses,
            }
        for search in SEARCHES:
            shipped = table[f"{search}/bootstrap_sd_of_best"]["best_loss_per_seed"]
            for term in TERMS:
                if term == "bootstrap_sd_of_best":
                    continue
                other = table[f"{search}/{term}"]["best_loss_per_seed"]
                table[f"{search}/{term}"]["shipped_vs_this"] = sim.noninferiority(
                    shipped, other, bench.NONINFERIORITY_MARGIN
                )
        result["budgets"][str(budget)] = table
        print(f"budget {budget}, {seeds} seeds, target loss {target:.4f}:", flush=True)
        for key, row in table.items():
            vs = row.get("shipped_vs_this")
            extra = ""
            if vs:
                extra = (
                    f"; shipped minus this: mean {vs['mean_difference']:+.4f} (upper 95% "
                    f"{vs['upper_bound_mean_difference']:+.4f}), better/equal/worse "
                    f"{vs['better_equal_worse']}"
                )
            print(
                f"  {key:>34}: best loss median {row['best_loss_median']:.4f}, mean "
                f"{row['best_loss_mean']:.4f}, reached {row['reached_target']}/{seeds}, "
                f"CNN trials {row['cnn_trials_median']:g}{extra}",
                flush=True,
            )
    path = write_result("shadho_uncertainty_quick" if args.quick else "shadho_uncertainty", result)
    print(f"results: {path}")


if __name__ == "__main__":
    main()
