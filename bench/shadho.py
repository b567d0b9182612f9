"""SHADHO vs hardware-oblivious scheduling vs plain TPE: a discrete-event simulation with real
losses and measured costs, plus one real run of the hpo-digits workflow.

Simulation (``shadho._simulate``): 4 fast workers (speed 4) and 16 slow ones (speed 1); the
SVM search on scikit-learn's digits, one sub-space per kernel. Losses and per-trial CPU costs
are real: a pool of configurations per kernel is evaluated for real once (3-fold CV, one
thread, ``time.process_time``; cached in bench/work/) and a proposal gets the loss and cost of
the nearest evaluated configuration of its kernel. Durations are simulated (cost / speed).
Every strategy gets the same trial budget, the same round size and the same seeds (paired).

Real run (``--real``): workflows/hpo-digits under ``--executor sticky`` with two local worker
classes, fast (2 cpus) and slow (1 cpu), on this machine.

    python bench/shadho.py            # 10 seeds x 240 trials, pools of 120 per kernel
    python bench/shadho.py --quick    # 3 seeds x 120 trials, pools of 30 per kernel
    python bench/shadho.py --real     # also the real workflow run
"""

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "plugins"))
os.environ.setdefault("OMP_NUM_THREADS", "1")

from _common import RESULTS, ROOT, WORK, fresh_copy, write_result  # noqa: E402

import shadho  # noqa: E402
from shadho import _simulate as sim  # noqa: E402
from shadho import digits  # noqa: E402

C = {"loguniform": [0.03125, 32768]}
GAMMA = {"loguniform": [1.0e-4, 10]}
KERNELS = {
    "svm_linear": {"kernel": "linear", "C": {"loguniform": [0.03125, 1024]}},
    "svm_rbf": {"kernel": "rbf", "C": C, "gamma": GAMMA},
    "svm_sigmoid": {"kernel": "sigmoid", "C": C, "gamma": GAMMA, "coef0": {"uniform": [-1, 1]}},
    "svm_poly": {
        "kernel": "poly",
        "C": C,
        "gamma": GAMMA,
        "coef0": {"uniform": [-1, 1]},
        "degree": {"randint": [2, 6]},
    },
}
HARDWARE = {"fast": {"count": 4, "speed": 4.0}, "slow": {"count": 16, "speed": 1.0}}


def make_spec(trials_per_round: int, hardware: "dict | None" = None) -> shadho.SearchSpec:
    return shadho.load_spec(
        {
            "space": {"model": {"exclusive": KERNELS}},
            "hardware": hardware or HARDWARE,
            "trials_per_round": trials_per_round,
            "rerank_every": trials_per_round,
            "n_startup_jobs": 5,
        }
    )


def evaluated_pool(spec: shadho.SearchSpec, per_kernel: int) -> sim.EvaluatedPool:
    """Really evaluate ``per_kernel`` random configurations of each kernel (cached)."""
    cache = WORK / f"shadho_pool_{per_kernel}.json"
    if cache.exists():
        entries = json.loads(cache.read_text())
    else:
        data = digits.load_data()
        entries = {}
        for index, (name, sub) in enumerate(spec.subspaces.items()):
            opt = shadho.SubspaceOptimizer(sub.space, n_startup_jobs=10**6)
            rows = []
            for s in opt.ask(per_kernel, seed=1000 + index):
                c0 = time.process_time()
                loss = digits.svm_loss(s.params, data, folds=3)["loss"]
                rows.append({"vals": s.vals, "loss": loss, "cost": time.process_time() - c0})
            entries[name] = rows
            print(
                f"  pool {name}: {per_kernel} real evaluations, best loss "
                f"{min(r['loss'] for r in rows):.4f}, mean cost "
                f"{statistics.mean(r['cost'] for r in rows):.3f} CPU-s",
                flush=True,
            )
        shadho.write_json(cache, entries)
    return sim.EvaluatedPool(entries, {n: s.space for n, s in spec.subspaces.items()})


def joint_tpe_space():
    """The whole space for plain TPE, labels prefixed by kernel so they are unique."""
    options = {n: shadho.space_from_config(cfg, f"space.{n}", n) for n, cfg in KERNELS.items()}
    names = list(options)

    def to_subspace_vals(vals):
        name = names[int(vals["__subspace__"])]
        prefix = f"{name}."
        return name, {k[len(prefix) :]: v for k, v in vals.items() if k.startswith(prefix)}

    return sim.joint_space(options), to_subspace_vals


def summarise(runs: list[dict], key: str) -> dict:
    values = sorted(r[key] for r in runs)
    finite = [v for v in values if math.isfinite(v)]
    q = statistics.quantiles(finite, n=4) if len(finite) >= 2 else [math.nan] * 3
    return {
        "median": statistics.median(values),
        "q1": q[0],
        "q3": q[2],
        "reached": len(finite) / len(values),
    }


def simulate(args) -> dict:
    spec = make_spec(args.round_size)
    pool = evaluated_pool(spec, args.pool)
    all_losses = sorted(r["loss"] for rows in pool.entries.values() for r in rows)
    target = all_losses[max(0, int(0.01 * len(all_losses)) - 1)]
    best_possible = all_losses[0]
    joint, to_vals = joint_tpe_space()
    rounds = args.budget // args.round_size
    strategies = {
        "shadho": lambda s: sim.simulate_shadho(spec, pool, rounds, s),
        "agnostic": lambda s: sim.simulate_agnostic(spec, pool, rounds, s),
        "agnostic_pull": lambda s: sim.simulate_agnostic(spec, pool, rounds, s, pull=True),
        "tpe": lambda s: sim.simulate_joint_tpe(spec, joint, to_vals, pool, rounds, s),
        # Not a strategy anyone can run: SHADHO told every trial's true cost (an upper bound).
        "shadho_oracle_costs": lambda s: sim.simulate_shadho(spec, pool, rounds, s, oracle=True),
    }
    per_seed: dict[str, list[dict]] = {k: [] for k in strategies}
    results_for_plot = {}
    for seed in range(args.seeds):
        for name, run in strategies.items():
            result = run(seed)
            metrics = result.metrics(target)
            metrics["time_to_best_possible_s"] = result.time_to(best_possible)
            per_seed[name].append(metrics)
            if seed == 0:
                results_for_plot[name] = result
        line = "  ".join(
            f"{n} {per_seed[n][-1]['trials_per_hour']:.0f}/h "
            f"best {per_seed[n][-1]['best_loss']:.4f}"
            for n in strategies
        )
        print(f"  seed {seed}: {line}", flush=True)
    keys = [
        "trials_per_hour",
        "work_per_hour",
        "utilisation",
        "time_to_target_s",
        "time_to_best_possible_s",
        "best_loss",
        "makespan_s",
    ]
    summary = {n: {k: summarise(per_seed[n], k) for k in keys} for n in strategies}
    ratios = {}
    for base in ("agnostic", "agnostic_pull", "tpe"):
        pairs = list(zip(per_seed["shadho"], per_seed[base], strict=True))
        ratios[base] = {
            "throughput_ratio_median": statistics.median(
                a["trials_per_hour"] / b["trials_per_hour"] for a, b in pairs
            ),
            "work_throughput_ratio_median": statistics.median(
                a["work_per_hour"] / b["work_per_hour"] for a, b in pairs
            ),
            "time_to_target_ratio_of_medians": (
                summary["shadho"]["time_to_target_s"]["median"]
                / summary[base]["time_to_target_s"]["median"]
            ),
            "time_to_best_possible_ratio_of_medians": (
                summary["shadho"]["time_to_best_possible_s"]["median"]
                / summary[base]["time_to_best_possible_s"]["median"]
            ),
            "best_loss_shadho_minus_base_median": statistics.median(
                a["best_loss"] - b["best_loss"] for a, b in pairs
            ),
        }
    oracle_pairs = list(zip(per_seed["shadho_oracle_costs"], per_seed["agnostic"], strict=True))
    oracle_bound = {
        "throughput_ratio_vs_agnostic_median": statistics.median(
            a["trials_per_hour"] / b["trials_per_hour"] for a, b in oracle_pairs
        ),
        "note": "SHADHO planning with every trial's true cost: not achievable, an upper bound",
    }
    print(
        f"  oracle costs: shadho/agnostic throughput "
        f"x{oracle_bound['throughput_ratio_vs_agnostic_median']:.2f}",
        flush=True,
    )
    plot(results_for_plot, target, RESULTS / "shadho.png")
    sensitivity = {}
    for speed in (2.0, 4.0, 8.0):
        hw = {"fast": {"count": 4, "speed": speed}, "slow": {"count": 16, "speed": 1.0}}
        spec_s = make_spec(args.round_size, hw)
        ratios_s = []
        for seed in range(args.sensitivity_seeds):
            a = sim.simulate_agnostic(spec_s, pool, rounds, seed)
            b = sim.simulate_shadho(spec_s, pool, rounds, seed)
            ratios_s.append(a.makespan / b.makespan)
        sensitivity[f"fast_speed_{speed:g}"] = {
            "throughput_ratio_vs_agnostic_median": statistics.median(ratios_s),
            "per_seed": ratios_s,
            # Random placement sends 16/20 of the work to the slow class (capacity 16); perfect
            # balancing spreads it over 4 * speed + 16: the ratio from load balance alone.
            "load_balance_ratio": (16 / 20) * (4 * speed + 16) / 16,
        }
        print(
            f"  fast speed {speed:g}: shadho/agnostic throughput "
            f"x{statistics.median(ratios_s):.2f}",
            flush=True,
        )
    return {
        "setup": {
            "workers": HARDWARE,
            "budget": rounds * args.round_size,
            "round_size": args.round_size,
            "rounds": rounds,
            "seeds": args.seeds,
            "pool_per_kernel": args.pool,
            "target_loss": target,
            "target_rule": "1st percentile of the pool's real losses",
            "best_possible_loss": best_possible,
            "durations": "simulated: real CPU cost / worker speed",
        },
        "summary": summary,
        "shadho_vs": ratios,
        "speed_sensitivity": sensitivity,
        "oracle_bound": oracle_bound,
        "per_seed": per_seed,
    }


def plot(results: dict, target: float, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for name, result in results.items():
        trials = sorted(result.trials, key=lambda t: t.end)
        best, xs, ys = math.inf, [], []
        for t in trials:
            if t.loss is not None and t.loss < best:
                best = t.loss
            xs.append(t.end)
            ys.append(best)
        left.step(xs, ys, where="post", label=name)
        right.plot(range(1, len(result.round_ends) + 1), result.round_ends, marker="o", label=name)
    left.axhline(target, color="grey", ls=":", label="target")
    left.set(
        xscale="log",
        yscale="log",
        xlabel="simulated time (s)",
        ylabel="best loss",
        title="Best loss over time (seed 0)",
    )
    right.set(
        xlabel="round", ylabel="simulated time at round end (s)", title="Round barriers (seed 0)"
    )
    left.legend(fontsize=8)
    right.legend(fontsize=8)
    fig.tight_layout()
    RESULTS.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def real_run() -> dict:
    """workflows/hpo-digits for real: sticky executor, classes fast (2 cpus) and slow (1)."""
    wd = fresh_copy(ROOT / "workflows" / "hpo-digits", WORK / "shadho-real")
    snakefile = wd / "Snakefile"
    snakefile.write_text(
        snakefile.read_text().replace("../../rules/hpo.smk", str(ROOT / "rules" / "hpo.smk"))
    )
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        "--executor",
        "sticky",
        "--cores",
        "3",
        "--resources",
        "hw_fast=1",
        "hw_slow=1",
        "--scheduler",
        "greedy",
        "--nocolor",
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "plugins")}
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=wd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    if proc.returncode:
        sys.exit(f"the real run failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    spec = shadho.load_spec(
        __import__("yaml").safe_load((wd / "config" / "config.yaml").read_text())["hpo"]
    )
    history = shadho.read_jsonl(wd / f"results/hpo/rounds/{spec.rounds - 1}/history.jsonl")
    best = shadho.read_json(wd / "results/hpo/report/best.json")["best"]
    per_class = {}
    for cls in spec.classes:
        mine = [r for r in history if r["hw_class"] == cls]
        per_class[cls] = {
            "trials": len(mine),
            "busy_s": round(sum(r["duration_s"] for r in mine), 2),
            "subspaces": sorted({r["subspace"] for r in mine}),
        }
    report = RESULTS / "shadho_real_report.md"
    report.write_text(
        (wd / "results/hpo/report/report.md")
        .read_text()
        .replace("](convergence.png)", "](shadho_real_convergence.png)")
    )
    shutil.copy(wd / "results/hpo/report/convergence.png", RESULTS / "shadho_real_convergence.png")
    return {
        "command": " ".join(cmd[1:]),
        "wall_s": round(wall, 1),
        "trials": len(history),
        "failed": sum(r["status"] != "ok" for r in history),
        "best_loss": best["loss"],
        "best_subspace": best["subspace"],
        "best_params": best["params"],
        "per_class": per_class,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="3 seeds, 120 trials, small pools")
    p.add_argument("--real", action="store_true", help="also run the workflow for real")
    args = p.parse_args()
    args.seeds, args.budget, args.pool = (3, 120, 30) if args.quick else (10, 240, 120)
    args.sensitivity_seeds = 2 if args.quick else 5
    args.round_size = 40
    print(
        f"simulation: {args.seeds} seeds x {args.budget} trials, rounds of "
        f"{args.round_size}, pools of {args.pool} per kernel",
        flush=True,
    )
    result = {"quick": args.quick, "simulation": simulate(args)}
    previous = RESULTS / "shadho.json"
    if args.real:
        print("real run of workflows/hpo-digits ...", flush=True)
        result["real_run"] = real_run()
    elif previous.exists() and "real_run" in json.loads(previous.read_text()):
        result["real_run"] = json.loads(previous.read_text())["real_run"]
    write_result("shadho", result)
    s = result["simulation"]
    for name, m in s["summary"].items():
        print(
            f"{name:>14}: {m['trials_per_hour']['median']:8.0f} trials/h  "
            f"work {m['work_per_hour']['median']:7.0f} CPU-s/h  "
            f"util {m['utilisation']['median']:.2f}  "
            f"TTT {m['time_to_target_s']['median']:7.1f} s "
            f"(reached {m['time_to_target_s']['reached']:.0%})  "
            f"to best {m['time_to_best_possible_s']['median']:.2f} s "
            f"({m['time_to_best_possible_s']['reached']:.0%})  "
            f"best {m['best_loss']['median']:.4f}"
        )
    for base, r in s["shadho_vs"].items():
        print(
            f"shadho vs {base:>13}: throughput x{r['throughput_ratio_median']:.2f}, "
            f"work throughput x{r['work_throughput_ratio_median']:.2f}, "
            f"time-to-target x{r['time_to_target_ratio_of_medians']:.2f}, "
            f"time-to-best x{r['time_to_best_possible_ratio_of_medians']:.2f}, "
            f"best loss diff {r['best_loss_shadho_minus_base_median']:+.4f}"
        )
    if "real_run" in result:
        rr = result["real_run"]
        print(
            f"real run: {rr['trials']} trials in {rr['wall_s']} s, best loss "
            f"{rr['best_loss']:.4f} ({rr['best_subspace']}), per class {rr['per_class']}"
        )


if __name__ == "__main__":
    main()
