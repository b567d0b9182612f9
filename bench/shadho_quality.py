"""Search quality at the real run's small budget, with real losses and simulated time.

The real Slurm run of bench/shadho.py (`--slurm`) measures wall time and best loss together,
but each of its 20 seeds x 6 strategies costs real seconds on two pilot jobs, too slow to
compare ranking designs. Here every proposal is evaluated for real by the workflow's own
objective (`snakemake_shadho.digits.evaluate`, one thread; results cached in
bench/work/shadho_live/ by their exact parameters, so a configuration is fitted once for all
strategies and seeds), while the cluster of the real run (fast: one worker of speed 3, slow:
one of speed 1) is simulated by bench/shadho.py's discrete-event core with the measured CPU
cost as each trial's reference cost. Unlike the main simulation, no loss comes from a
nearest-neighbour pool: a search can find a better configuration than any evaluated before.

Printed and written to bench/results/shadho_quality.json: per strategy the median best loss at
budget, how many CNN trials it ran, and for each SHADHO variant against plain TPE and Optuna
the paired better/equal/worse counts, the mean difference with its one-sided 95% bootstrap
upper bound and the non-inferiority verdict at bench/shadho.py's margin (0.002).

    python bench/shadho_quality.py            # 20 seeds, budget 48 (the real run's)
    python bench/shadho_quality.py --quick    # 2 seeds, budget 24 (under a minute)
    python bench/shadho_quality.py --seeds 60 --label seeds60   # shadho_quality_seeds60.json

``--ranking performance|lcb``, ``--allocation windows|co_leads`` (the class assignment before
issue 30 part 3, and a rejected alternative) and ``--set KEY=VALUE`` (any search setting, e.g.
``--set explore_fraction=0.625``) screen alternatives against the same cached evaluations;
``--first-seed 20 --seeds 40`` confirms a kept one on held-out seeds.
``bench/results/shadho_quality_screen.json`` holds the screen behind docs/shadho-benchmark.md.
"""

import argparse
import json
import math
import os
import statistics
import sys
import time
from dataclasses import replace
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from _common import RESULTS, ROOT, WORK, write_result
from hyperopt import space_eval

import snakemake_shadho as shadho
from snakemake_shadho import _ranking, _rounds
from snakemake_shadho import _simulate as sim

sys.path.insert(0, str(Path(__file__).parent))
import shadho as bench_shadho  # noqa: E402  (bench/shadho.py: the workflow's space)
from _shadho_slurm import CLASSES, ROUND, real_run_spec  # noqa: E402  (the real run's cluster)

MARGIN = bench_shadho.NONINFERIORITY_MARGIN
CACHE = WORK / "shadho_live"
BASELINES = ("tpe_async", "optuna_async", "agnostic_async")
VARIANTS = ("shadho", "shadho_async")


class LivePool:
    """Evaluates each proposal for real (cached by sub-space and exact parameters).

    One per worker process (:func:`live_pool`): the data, the cache files and the append
    handle are loaded once, not once per seed. ``spec`` only supplies the sub-spaces' spaces,
    which every seed's spec shares."""

    def __init__(self, spec: shadho.SearchSpec) -> None:
        from snakemake_shadho import digits

        self.spec = spec
        self.data = digits.load_data()
        self.cache: dict[str, dict[str, Any]] = {}
        CACHE.mkdir(parents=True, exist_ok=True)
        for path in CACHE.glob("*.jsonl"):
            for line in path.read_text().splitlines():
                if line.strip():
                    row = json.loads(line)
                    self.cache[row["key"]] = row
        self.out = (CACHE / f"{os.getpid()}.jsonl").open("a")
        self.evaluated = 0

    def lookup(self, subspace: str, vals: Any) -> dict[str, Any]:
        from snakemake_shadho import digits

        params = space_eval(self.spec.subspaces[subspace].space, vals)
        key = json.dumps([subspace, params], sort_keys=True, default=str)
        if key not in self.cache:
            c0 = time.process_time()
            loss = digits.evaluate(params, self.data, threads=1, folds=3)["loss"]
            row = {"key": key, "loss": loss, "cost": time.process_time() - c0}
            self.cache[key] = row
            self.out.write(json.dumps(row) + "\n")
            self.out.flush()
            self.evaluated += 1
        return self.cache[key]


_POOL: "LivePool | None" = None


def live_pool(spec: shadho.SearchSpec) -> LivePool:
    """This process's :class:`LivePool`, made on first use."""
    global _POOL
    if _POOL is None:
        _POOL = LivePool(spec)
    return _POOL


def _by_performance(stats: list, key: Any) -> list[str]:
    """Unexplored sub-spaces first (in Borda order), then the explored ones by ``key``."""
    order = _ranking.borda_order(stats)
    new = [n for n in order if not next(s for s in stats if s.name == n).explored]
    seen = [s for s in stats if s.explored]
    return [*new, *(s.name for s in sorted(seen, key=lambda s: (key(s), s.name)))]


def _best(s: Any) -> float:
    return s.best_loss if s.best_loss is not None else math.inf


def _lcb(s: Any) -> float:
    return _best(s) - (s.uncertainty or 0.0)


def _windows(ranking: Any, classes: Any, allowed: Any, lead: Any = None) -> Any:
    """The assignment before the incumbent was served by every class (commit f7bdc2a)."""
    return _ASSIGN(ranking, classes, allowed)


def _co_leads(stats: Any) -> Any:
    """The incumbent and every explored sub-space whose optimistic best (best loss less twice
    its bootstrap spread) beats the incumbent's best."""
    lead = _INCUMBENT(stats)
    if lead is None:
        return None
    best = next(s.best_loss for s in stats if s.name == lead)
    others = [
        s.name
        for s in stats
        if s.name != lead
        and s.explored
        and s.best_loss is not None
        and s.best_loss - 2 * (s.uncertainty or 0.0) < best
    ]
    return (lead, *others)


def _served_everywhere(ranking: Any, classes: Any, allowed: Any, lead: Any = None) -> Any:
    """The shipped rule for a tuple of leads (:func:`_co_leads`)."""
    leads = (lead,) if isinstance(lead, str) else tuple(lead or ())
    serving = _ASSIGN(ranking, classes, allowed)
    order = {s: i for i, s in enumerate(ranking)}
    first = {
        c.name: [s for s in serving[c.name] if c.name in _specialists(s, classes, allowed)]
        for c in classes
    }
    for head in leads:
        hosts = [c for c in classes if c.name in allowed[head]]
        if _ranking.specialist_of(head, hosts) is not None:
            continue
        for c in hosts:
            if head not in serving[c.name]:
                serving[c.name].append(head)
    return {
        c: sorted(subs, key=lambda s: (s not in first[c], s not in leads, order[s]))
        for c, subs in serving.items()
    }


def _specialists(sub: str, classes: Any, allowed: Any) -> set[str]:
    hosts = [c for c in classes if c.name in allowed[sub]]
    best = _ranking.specialist_of(sub, hosts)
    return {best.name} if best is not None else set()


_ASSIGN = _rounds.assign_classes
_INCUMBENT = _rounds.incumbent
ALLOCATIONS = {"shipped": _ASSIGN, "windows": _windows, "co_leads": _served_everywhere}

RANKINGS = {
    "shipped": _ranking.rank_subspaces,
    "performance": lambda stats: _by_performance(stats, _best),
    "lcb": lambda stats: _by_performance(stats, _lcb),
}


def run_seed(job: dict[str, Any]) -> dict[str, Any]:
    import torch

    torch.set_num_threads(1)
    _rounds.rank_subspaces = RANKINGS[job["ranking"]]  # plan_round looks it up at call time
    _rounds.assign_classes = ALLOCATIONS[job["allocation"]]
    _rounds.incumbent = _co_leads if job["allocation"] == "co_leads" else _INCUMBENT
    options, seed, budget = job["options"], job["seed"], job["budget"]
    spec = replace(real_run_spec(options, **job["overrides"]), rounds=budget // ROUND)
    pool = live_pool(spec)
    evaluated_before = pool.evaluated
    joint, to_vals = sim.joint_space_from_config(options)
    ov = sim.Overheads(**job["overheads"])
    runners = {
        "shadho": lambda: sim.simulate_shadho(spec, pool, budget // ROUND, seed, overheads=ov),
        "shadho_async": lambda: sim.simulate_shadho_async(spec, pool, budget, seed, ov),
        "agnostic_async": lambda: sim.simulate_agnostic_async(spec, pool, budget, seed, ov),
        "tpe_async": lambda: sim.simulate_joint_tpe_async(
            spec, joint, to_vals, pool, budget, seed, ov
        ),
        "optuna_async": lambda: sim.simulate_optuna_async(spec, options, pool, budget, seed, ov),
    }
    out: dict[str, Any] = {"seed": seed, "runs": {}}
    for name in job["strategies"]:
        result = runners[name]()
        by_sub: dict[str, list[float]] = {}
        for t in result.trials:
            if t.loss is not None:
                by_sub.setdefault(t.subspace, []).append(t.loss)
        out["runs"][name] = {
            "best_loss": result.best_loss(),
            "makespan_s": result.makespan,
            "trials_by_subspace": {s: len(v) for s, v in sorted(by_sub.items())},
            "best_by_subspace": {s: min(v) for s, v in sorted(by_sub.items())},
        }
    out["evaluated"] = pool.evaluated - evaluated_before
    return out


def _setting(text: str) -> Any:
    """A --set value: JSON (1.5, true, "x"), or else the text itself (rounds)."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--seeds", type=int)
    parser.add_argument("--budget", type=int)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--strategies", default=",".join((*VARIANTS, *BASELINES)))
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=JSON", help="a spec setting"
    )
    parser.add_argument("--ranking", choices=sorted(RANKINGS), default="shipped")
    parser.add_argument("--allocation", choices=sorted(ALLOCATIONS), default="shipped")
    parser.add_argument("--first-seed", type=int, default=0, help="held-out seeds start here")
    parser.add_argument("--label", default="shipped")
    args = parser.parse_args()
    seeds = args.seeds or (2 if args.quick else 20)
    budget = args.budget or (24 if args.quick else 48)
    overrides = {k: _setting(v) for k, v in (s.split("=", 1) for s in args.set)}
    options = bench_shadho.workflow_options()
    measured = json.loads((RESULTS / "shadho_overheads.json").read_text())
    overheads = {"per_trial_s": measured["per_trial_s"], "per_round_s": 0.0}
    strategies = args.strategies.split(",")
    jobs = [
        {
            "options": options,
            "seed": seed,
            "budget": budget,
            "overrides": overrides,
            "ranking": args.ranking,
            "allocation": args.allocation,
            "overheads": overheads,
            "strategies": strategies,
        }
        for seed in range(args.first_seed, args.first_seed + seeds)
    ]
    t0 = time.perf_counter()
    with get_context("spawn").Pool(args.jobs) as workers:
        rows = workers.map(run_seed, jobs)
    summary: dict[str, Any] = {}
    for name in strategies:
        best = [r["runs"][name]["best_loss"] for r in rows]
        cnn = [r["runs"][name]["trials_by_subspace"].get("cnn", 0) for r in rows]
        summary[name] = {
            "best_loss_median": statistics.median(best),
            "cnn_trials_median": statistics.median(cnn),
        }
        print(
            f"  {name:>15}: best loss median {statistics.median(best):.4f}, CNN trials "
            f"median {statistics.median(cnn)}",
            flush=True,
        )
    versus = {}
    for variant in (v for v in strategies if v.startswith("shadho")):
        for base in (b for b in strategies if not b.startswith("shadho")):
            a = [r["runs"][variant]["best_loss"] for r in rows]
            b = [r["runs"][base]["best_loss"] for r in rows]
            versus[f"{variant}_vs_{base}"] = c = sim.noninferiority(a, b, MARGIN)
            print(
                f"  {variant} vs {base}: better/equal/worse {c['better_equal_worse']}, "
                f"mean diff {c['mean_difference']:+.4f} "
                f"(upper {c['upper_bound_mean_difference']:+.4f}), not worse {c['not_worse']}, "
                f"Wilcoxon p(worse) {c['wilcoxon_p_worse']:.3f}",
                flush=True,
            )
    result = {
        "label": args.label,
        "quick": args.quick,
        "setup": {
            "classes": CLASSES,
            "round_size": ROUND,
            "budget": budget,
            "seeds": seeds,
            "overrides": overrides,
            "ranking": args.ranking,
            "allocation": args.allocation,
            "first_seed": args.first_seed,
            "overheads": overheads,
            "margin": MARGIN,
        },
        "wall_s": round(time.perf_counter() - t0, 1),
        "evaluated": sum(r["evaluated"] for r in rows),
        "summary": summary,
        "versus": versus,
        "per_seed": rows,
    }
    print(f"  {result['evaluated']} new evaluations, {result['wall_s']} s", flush=True)
    name = "shadho_quality_quick.json" if args.quick else "shadho_quality.json"
    path = RESULTS / (name if args.label == "shipped" else f"shadho_quality_{args.label}.json")
    write_result("shadho_quality", result, path)
    print(f"  wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
