"""SHADHO on the hardware it exists for: a class that is fast for some models only.

Every earlier SHADHO benchmark gave a hardware class one speed for every model, where placing
sub-spaces on classes cannot beat "each free worker takes the next trial". Here one class is
GPU-like: it runs the CNN 10 to 30 times as fast as the CPU class and the SVMs no faster.

Simulation (``snakemake_shadho._simulate``, the same real pools and measured overheads as
bench/shadho.py): 4 ``gpu`` workers and 16 ``cpu`` workers searching workflows/hpo-digits'
space (four SVM kernels and the CNN). In each seed the GPU's true CNN speed-up is drawn from
U(10, 30); the durations come from that true hardware, never from what a strategy is told.
Strategies, paired over seeds, asynchronous (every free worker takes the next trial at once):

- ``shadho_async``: SHADHO (``execution: async``) with the GPU declared ``speed_by_subspace:
  {cnn: 20}``: a prior, corrected by the speeds measured from the trials' durations;
- ``shadho_async_measured``: the same with nothing declared (every class speed 1): it has to
  find the GPU's advantage from the durations alone;
- ``tpe_async`` (plain hyperopt TPE over the joint space), ``optuna_async`` (Optuna's TPE,
  constant liar), ``agnostic_async`` (a uniformly drawn sub-space's TPE): the
  hardware-agnostic baselines, whatever worker frees takes their next trial.

Budgets 24, 48 and 120 trials, each with its own target (the median over seeds of plain TPE's
final best loss at that budget); two cost settings: the real CPU costs (x1, where the
search's start-up, paid alike by every strategy, is a large part of the time) and every cost
x100 (trials of about a minute on a CPU, as real training is).

Real run (``--slurm``): two pilot jobs on the local Slurm cluster, ``gpu`` at a whole CPU,
``cpu`` running its CNN trials at a tenth of one (a duty-cycle limit inside its job, applied to
CNN trials only) and its SVM trials at full speed; SHADHO (declared ``cnn: 10``) and the
agnostic baselines search for real, interleaved within each seed. SHADHO runs twice: on the
benchmark's own pilots (``shadho_async``) and as ``execution: async`` ships
(``shadho_shipped``: the driver on sticky Slurm pilots, trials forked from the warm worker,
the CNN slowdown applied inside each trial by ``_shadho_hetero_objective.py``); the
benchmark's pilots are released while the shipped search runs (the node has two CPUs).

Writes ``bench/results/shadho_hetero.json``: ``time_to_target_vs_best_agnostic`` (median ratio
of SHADHO's time to target over the best agnostic baseline's, per setting and budget, and
real) and ``best_loss_vs_optuna_upper`` (the one-sided 95% upper bound of the mean paired
difference SHADHO - Optuna in best loss; <= the margin 0.002 means "not worse").

    python bench/shadho_hetero.py            # 20 seeds x budgets 24/48/120 x costs x1/x100
    python bench/shadho_hetero.py --quick    # 3 seeds, budgets 24 and 48, small pools
    python bench/shadho_hetero.py --slurm    # the real run (adds to the results)
"""

import argparse
import json
import math
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

import numpy as np  # noqa: E402
import shadho as base  # noqa: E402  (bench/shadho.py: pools, overheads, statistics)
from _common import RESULTS, measured_commit, write_result  # noqa: E402

import snakemake_shadho as shadho  # noqa: E402
from snakemake_shadho import _simulate as sim  # noqa: E402

GPU_WORKERS, CPU_WORKERS = 4, 16
CNN_SPEEDUP = (10.0, 30.0)  # the GPU's true CNN speed-up, drawn per seed
DECLARED_CNN = 20.0
BUDGETS = (24, 48, 120)
COSTS = {"x1": 1.0, "x100": 100.0}
VARIANTS = ("shadho_async", "shadho_async_measured")
BASELINES = ("tpe_async", "optuna_async", "agnostic_async")
STRATEGIES = (*VARIANTS, *BASELINES)
GOAL_RATIO = 0.7


def hardware(cnn: "float | None") -> dict[str, dict[str, Any]]:
    """The classes in config form; ``cnn`` is the GPU's speed on the CNN (None: undeclared)."""
    gpu: dict[str, Any] = {"count": GPU_WORKERS, "speed": 1.0}
    if cnn is not None:
        gpu["speed_by_subspace"] = {"cnn": cnn}
    return {"gpu": gpu, "cpu": {"count": CPU_WORKERS, "speed": 1.0}}


def true_speedup(seed: int) -> float:
    return float(np.random.default_rng([seed, 30]).uniform(*CNN_SPEEDUP))


def run_seed(job: dict[str, Any]) -> dict[str, Any]:
    """Every strategy on one seed, on that seed's true hardware; per strategy its trials as
    (end, loss) pairs and its metrics (the shape bench/shadho.py's run_setting reads)."""
    options, seed, budget = job["options"], job["seed"], job["budget"]
    truth = shadho.parse_hardware(hardware(true_speedup(seed)))
    declared = base.make_spec(options, hardware(DECLARED_CNN))
    undeclared = base.make_spec(options, hardware(None))
    pool = base.make_pool(declared, job["entries"], job["cost_scale"])
    ov = sim.Overheads(**job["overheads"])
    joint, to_vals = sim.joint_space_from_config(options)
    runners = {
        "shadho_async": lambda: sim.simulate_shadho_async(
            declared, pool, budget, seed, ov, hardware=truth
        ),
        "shadho_async_measured": lambda: sim.simulate_shadho_async(
            undeclared, pool, budget, seed, ov, hardware=truth
        ),
        "tpe_async": lambda: sim.simulate_joint_tpe_async(
            declared, joint, to_vals, pool, budget, seed, ov, hardware=truth
        ),
        "optuna_async": lambda: sim.simulate_optuna_async(
            declared, options, pool, budget, seed, ov, hardware=truth
        ),
        "agnostic_async": lambda: sim.simulate_agnostic_async(
            declared, pool, budget, seed, ov, hardware=truth
        ),
    }
    out: dict[str, Any] = {"seed": seed, "runs": {}}
    for name in job["strategies"]:
        t0 = time.perf_counter()
        result = runners[name]()
        m = result.metrics(math.inf)
        m.pop("time_to_target_s")
        m["cnn_trials"] = sum(t.subspace == "cnn" for t in result.trials)
        gpu = set(range(GPU_WORKERS))  # the GPU workers come first (declaration order, speed 1)
        m["cnn_on_gpu"] = sum(t.subspace == "cnn" and t.worker in gpu for t in result.trials)
        m["utilisation_by_speed"] = result.utilisation_by_speed()
        m["compute_s"] = time.perf_counter() - t0
        out["runs"][name] = {
            "metrics": m,
            "curve": sorted((t.end, t.loss) for t in result.trials if t.loss is not None),
        }
    return out


def simulate(args: argparse.Namespace, options: dict, entries: dict) -> dict[str, Any]:
    overheads = base.load_overheads(args.quick)
    settings: dict[str, Any] = {}
    for cost_label, scale in COSTS.items():
        for budget in args.budgets:
            label = f"costs_{cost_label}_budget{budget}"
            s = base.run_setting(
                label, options, entries, overheads, scale, STRATEGIES, args.seeds, budget,
                args.jobs, runner=run_seed, variants=VARIANTS,
            )  # fmt: skip
            s.pop("curves_seed0", None)
            s["cnn_on_gpu_median"] = {
                n: statistics.median(s["per_seed"][n]["cnn_on_gpu"]) for n in STRATEGIES
            }
            s["cnn_trials_median"] = {
                n: statistics.median(s["per_seed"][n]["cnn_trials"]) for n in STRATEGIES
            }
            s["search_time_to_target_vs_best_agnostic"] = search_time_ratios(s, overheads)
            settings[label] = s
            show(label, s)
    return settings


def search_time_ratios(s: dict[str, Any], overheads: dict[str, float]) -> dict[str, Any]:
    """Time to target counted from the first trial's start, not the search's launch: every
    strategy pays the same start-up (``per_round_s``, 24 s measured), which at the real CPU
    costs (trials of 0.1-0.5 s) is most of the time to target and hides what placement does."""
    start = overheads["per_round_s"]

    def col(name: str) -> list[float]:
        return [
            math.inf if v is None else v - start for v in s["per_seed"][name]["time_to_target_s"]
        ]

    best = s["goals"]["best_agnostic_baseline"]
    return {v: base.compare(col(v), col(best)) for v in VARIANTS} | {"best_agnostic": best}


def show(label: str, s: dict[str, Any]) -> None:
    print(f"{label}: target loss {s['target_loss']:.4f}", flush=True)
    for name in STRATEGIES:
        row = s["summary"][name]
        print(
            f"  {name:22s} time to target {base.fmt(row['time_to_target_s']['median'], 1):>7s} s"
            f" (reached {row['time_to_target_s']['reached']:.0%})"
            f"  best loss {base.fmt(row['best_loss']['median'], 4)}"
            f"  CNN trials {s['cnn_trials_median'][name]:g}"
            f" ({s['cnn_on_gpu_median'][name]:g} on the GPU)",
            flush=True,
        )
    best = s["goals"]["best_agnostic_baseline"]
    for v in VARIANTS:
        g = s["goals"][v]
        nonin = s["shadho_vs"][v]["optuna_async"]["best_loss"]
        search = s["search_time_to_target_vs_best_agnostic"][v]["ratio_of_medians"]
        print(
            f"  {v}: time to target {base.fmt(g['time_to_target_ratio_vs_best'])}x {best}"
            f" (from the first trial's start {base.fmt(search)}x)"
            f" (goal <= {GOAL_RATIO}); best loss - Optuna's: upper bound "
            f"{nonin['upper_bound_mean_difference']:+.4f} (not worse: {nonin['not_worse']})",
            flush=True,
        )


def headline(settings: dict[str, Any], real: dict[str, Any]) -> dict[str, Any]:
    """The issue's two figures, per setting and budget (and per budget of the real runs)."""
    ttt: dict[str, Any] = {"simulated": {}}
    upper: dict[str, Any] = {"simulated": {}}
    for label, s in settings.items():
        ttt["simulated"][label] = {
            v: s["goals"][v]["time_to_target_ratio_vs_best"] for v in VARIANTS
        } | {
            "best_agnostic": s["goals"]["best_agnostic_baseline"],
            "from_first_trial": {
                v: s["search_time_to_target_vs_best_agnostic"][v]["ratio_of_medians"]
                for v in VARIANTS
            },
        }
        upper["simulated"][label] = {
            v: s["shadho_vs"][v]["optuna_async"]["best_loss"]["upper_bound_mean_difference"]
            for v in VARIANTS
        }
    for budget, run in real.items():
        ttt.setdefault("real", {})[f"budget{budget}"] = run["time_to_target_vs_best_agnostic"]
        upper.setdefault("real", {})[f"budget{budget}"] = run["best_loss_vs_optuna_upper"]
    return {"time_to_target_vs_best_agnostic": ttt, "best_loss_vs_optuna_upper": upper}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="3 seeds, budgets 24 and 48")
    p.add_argument("--seeds", type=int, default=None, help="paired seeds (default 20; 3 quick)")
    p.add_argument("--jobs", type=int, default=2, help="worker processes for the seeds")
    p.add_argument("--pool", type=int, default=None, help="evaluated configurations (60)")
    p.add_argument("--slurm", action="store_true", help="only the real run on local Slurm")
    p.add_argument("--slurm-seeds", type=int, default=20, help="seeds of the real run")
    p.add_argument(
        "--slurm-budget", type=int, default=24, help="trials per real search (kept per budget)"
    )
    args = p.parse_args()
    args.seeds = args.seeds or (3 if args.quick else 20)
    args.budgets = BUDGETS[:2] if args.quick else BUDGETS
    name = "shadho_hetero_quick" if args.quick else "shadho_hetero"
    previous = RESULTS / f"{name}.json"
    result: dict[str, Any] = json.loads(previous.read_text()) if previous.exists() else {}
    # write_result stamps these anew; the commit and date are the simulation's (a real run
    # records its own)
    for stamp in ("benchmark", "machine", *(() if args.slurm else ("commit", "date"))):
        result.pop(stamp, None)
    options = base.workflow_options()
    if args.slurm:
        import _shadho_slurm

        measured = measured_commit()
        real = _shadho_slurm.hetero_main(options, args.slurm_seeds, args.slurm_budget)
        real["commit"] = measured
        real["date"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        if "slurm_run" in result:  # the layout before runs were kept per budget
            old = result.pop("slurm_run")
            result.setdefault("slurm_runs", {})[str(old["setup"]["budget"])] = old
        result.setdefault("slurm_runs", {})[str(args.slurm_budget)] = real
    else:
        pool_size = args.pool or (20 if args.quick else 60)
        entries = base.pool_entries(base.make_spec(options), pool_size)
        result["setup"] = {
            "hardware_declared": hardware(DECLARED_CNN),
            "hardware_true": f"gpu CNN speed-up ~ U{CNN_SPEEDUP} per seed, every other speed 1",
            "seeds": args.seeds,
            "budgets": list(args.budgets),
            "cost_scales": COSTS,
            "pool_per_subspace": pool_size,
            "target_rule": "per budget: median over seeds of plain async TPE's final best loss",
            "noninferiority_margin": base.NONINFERIORITY_MARGIN,
            "goal": f"time to target <= {GOAL_RATIO}x the best agnostic baseline; best loss "
            "not worse than Optuna's TPE (upper bound <= margin)",
        }
        result["settings"] = simulate(args, options, entries)
    result.update(headline(result.get("settings", {}), result.get("slurm_runs", {})))
    path = write_result(name, result)
    print(f"results: {path}", flush=True)


if __name__ == "__main__":
    main()
