"""SHADHO against the strongest hardware-agnostic baselines: a discrete-event simulation with
real losses, real per-trial costs and overheads measured on real runs, plus one real run on the
local Slurm cluster.

Simulation (``snakemake_shadho._simulate``): 4 fast workers (speed 4) and 16 slow ones (speed
1), searching the space of workflows/hpo-digits (read from its config): four SVM kernels and
the small torch CNN, one sub-space each. Losses and per-trial CPU costs are real: a pool of
random configurations per sub-space is evaluated once by the workflow's own objective
(``snakemake_shadho.digits.evaluate``, one thread, ``time.process_time``; cached in
bench/work/), and a proposal gets the loss and cost of the nearest evaluated configuration of
its sub-space. Every strategy gets the same cluster, trial budget, overheads and seeds (paired):

- ``shadho``: SHADHO as built (rounds of 20 with a barrier, ranking, class placement);
- ``agnostic``: the barrier baseline (same rounds, random sub-space and placement);
- ``agnostic_async``: the asynchronous hardware-agnostic baseline (Work Queue's model: a free
  worker pulls the next trial of a random sub-space's TPE; no rounds);
- ``tpe_async``: plain hyperopt TPE over the joint space, one trial per free worker;
- ``optuna_async``: Optuna's TPE sampler (``constant_liar=True``) over the same joint space.

Overheads (``--measure-overheads``): workflows/hpo-digits is run for real (sticky executor,
classes fast and slow, one trial at a time each) and its trial records' wall-clock stamps give
the per-trial overhead (the gap between one trial's end and the next one's start on the same
class inside a round) and the per-round overhead (the gap between a round's last end and the
next round's first start, less one per-trial gap). They go to bench/results/shadho_overheads.json
and into every simulated strategy. Besides the main setting, two sensitivities: no overheads
(the idealised cluster of the earlier benchmark) and every trial cost x100 (long trials, where
overheads matter less).

Statistics: medians over seeds with 95% percentile-bootstrap intervals; ratios of medians with
paired-bootstrap intervals; "best loss not worse than plain TPE" as a paired non-inferiority
test (one-sided 95% bootstrap bound of the mean difference below a margin of 0.002, about one
misclassified digit in 500) with the one-sided Wilcoxon p-value beside it. The time-to-target
loss is the median over seeds of plain (async) TPE's final best loss in the main setting.

Real run (``--slurm``, see bench/_shadho_slurm.py): two pilot jobs on the local Slurm cluster,
one per class, the slow one held to a third of a CPU by a duty-cycle limit inside the job; SHADHO
and the async agnostic baseline (and plain TPE) each search for real on them.

    python bench/shadho.py --measure-overheads   # real workflow run: the overheads (~1 min)
    python bench/shadho.py                       # 20 seeds x 120 trials + sensitivities
    python bench/shadho.py --quick               # 2 seeds x 80 trials, small pools
    python bench/shadho.py --slurm               # the real run on Slurm, into the results
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
os.environ.setdefault("OMP_NUM_THREADS", "1")

from _common import (  # noqa: E402
    PLUGIN_ROOTS,
    RESULTS,
    ROOT,
    WORK,
    fresh_copy,
    measured_commit,
    write_result,
)

sys.path[:0] = PLUGIN_ROOTS  # this checkout's code first

import numpy as np  # noqa: E402

import snakemake_shadho as shadho  # noqa: E402
from snakemake_shadho import _simulate as sim  # noqa: E402
from snakemake_shadho import digits  # noqa: E402

WORKFLOW_CONFIG = ROOT / "workflows" / "hpo-digits" / "config" / "config.yaml"
OVERHEADS_FILE = RESULTS / "shadho_overheads.json"
HARDWARE = {"fast": {"count": 4, "speed": 4.0}, "slow": {"count": 16, "speed": 1.0}}
ROUND_SIZE = 20  # one trial per worker, the barrier design as built
NONINFERIORITY_MARGIN = 0.002
MEASURE_TIMEOUT_S = 600
PIPELINE_DEPTH = 2
# SHADHO without the barrier needs the planner's pending= (i16core); absent, it is left out.
SHADHO = ("shadho", "shadho_pipelined", "shadho_async") if sim.planner_pipelines() else ("shadho",)
AGNOSTIC = ("agnostic", "agnostic_async", "tpe_async", "optuna_async")
MAIN = (*SHADHO, *AGNOSTIC)
SENSITIVITY = (*SHADHO, "agnostic_async")


def workflow_options() -> dict[str, dict]:
    """The sub-spaces of workflows/hpo-digits (4 SVM kernels and the CNN), read from its config
    so the benchmark searches exactly the space the real workflow does."""
    import yaml

    config = yaml.safe_load(WORKFLOW_CONFIG.read_text())
    return dict(config["hpo"]["space"]["model"]["exclusive"])


def make_spec(options: dict, hardware: "dict | None" = None) -> shadho.SearchSpec:
    return shadho.load_spec(
        {
            "space": {"model": {"exclusive": options}},
            "hardware": hardware or HARDWARE,
            "trials_per_round": ROUND_SIZE,
            "rerank_every": ROUND_SIZE,
            "n_startup_jobs": 5,
        }
    )


def _pool_rows(name: str, sub: shadho.SubSpace, size: int, seed: int, data) -> list[dict]:
    """``size`` random configurations of one sub-space, each evaluated for real by the
    workflow's objective (one thread), with its loss and CPU seconds; cached in bench/work/."""
    cache = WORK / f"shadho_pool_{name}_{size}.json"
    if cache.exists():
        return json.loads(cache.read_text())
    if name == "cnn":
        # Warm torch up (first-call allocation and kernel selection) outside the measurement.
        digits.cnn_loss({"channels": 4, "lr": 0.01, "epochs": 1}, data)
    opt = shadho.SubspaceOptimizer(sub.space, n_startup_jobs=10**6)
    rows = []
    for s in opt.ask(size, seed=seed):
        c0 = time.process_time()
        loss = digits.evaluate(s.params, data, threads=1, folds=3)["loss"]
        rows.append({"vals": s.vals, "loss": loss, "cost": time.process_time() - c0})
    print(
        f"  pool {name}: {size} real evaluations, best loss "
        f"{min(r['loss'] for r in rows):.4f}, mean cost "
        f"{statistics.mean(r['cost'] for r in rows):.3f} CPU-s",
        flush=True,
    )
    WORK.mkdir(parents=True, exist_ok=True)
    shadho.write_json(cache, rows)
    return rows


def pool_entries(spec: shadho.SearchSpec, size: int) -> dict[str, list[dict]]:
    """Really evaluated configurations of every sub-space (``size`` each; cached)."""
    data = None
    entries = {}
    for index, (name, sub) in enumerate(spec.subspaces.items()):
        if data is None and not (WORK / f"shadho_pool_{name}_{size}.json").exists():
            data = digits.load_data()
        entries[name] = _pool_rows(name, sub, size, 1000 + index, data)
    return entries


def make_pool(spec: shadho.SearchSpec, entries: dict, cost_scale: float = 1.0) -> sim.EvaluatedPool:
    scaled = {
        n: [{**r, "cost": r["cost"] * cost_scale} for r in rows] for n, rows in entries.items()
    }
    return sim.EvaluatedPool(scaled, {n: s.space for n, s in spec.subspaces.items()})


# --- One seed of one setting (runs in a worker process) ---


def run_seed(job: dict[str, Any]) -> dict[str, Any]:
    """Every strategy of ``job["strategies"]`` on one seed; per strategy its trials as
    (end, loss) pairs, its metrics (without time to target) and utilisation per speed."""
    options, seed, budget = job["options"], job["seed"], job["budget"]
    spec = make_spec(options)
    pool = make_pool(spec, job["entries"], job["cost_scale"])
    ov = sim.Overheads(**job["overheads"])
    rounds = budget // ROUND_SIZE
    joint, to_vals = sim.joint_space_from_config(options)
    runners = {
        "shadho": lambda: sim.simulate_shadho(spec, pool, rounds, seed, overheads=ov),
        "shadho_pipelined": lambda: sim.simulate_shadho_pipelined(
            spec, pool, rounds, seed, PIPELINE_DEPTH, ov
        ),
        "shadho_async": lambda: sim.simulate_shadho_async(spec, pool, budget, seed, ov),
        "agnostic": lambda: sim.simulate_agnostic(spec, pool, rounds, seed, overheads=ov),
        "agnostic_async": lambda: sim.simulate_agnostic_async(spec, pool, budget, seed, ov),
        "tpe_async": lambda: sim.simulate_joint_tpe_async(
            spec, joint, to_vals, pool, budget, seed, ov
        ),
        "optuna_async": lambda: sim.simulate_optuna_async(spec, options, pool, budget, seed, ov),
    }
    out: dict[str, Any] = {"seed": seed, "runs": {}}
    results = {}
    for name in job["strategies"]:
        t0 = time.perf_counter()
        result = runners[name]()
        results[name] = result
        m = result.metrics(math.inf)
        m.pop("time_to_target_s")
        m["cnn_trials"] = sum(t.subspace == "cnn" for t in result.trials)
        m["utilisation_by_speed"] = result.utilisation_by_speed()
        m["compute_s"] = time.perf_counter() - t0
        out["runs"][name] = {
            "metrics": m,
            "curve": sorted((t.end, t.loss) for t in result.trials if t.loss is not None),
        }
    if "shadho" in results:
        replay = sim.replay_agnostic(spec, results["shadho"], seed, ov)
        out["placement_alone"] = replay.makespan / results["shadho"].makespan
    return out


def time_to(curve: list, target: float) -> float:
    return min((end for end, loss in curve if loss <= target), default=math.inf)


def describe(values: list[float]) -> dict[str, Any]:
    """Median (an order statistic: infinite when half the seeds never got there) and its 95%
    bootstrap interval; JSON has no infinity, so "inf" is written as null."""
    lo, hi = sim.bootstrap_ci(values)
    med = sim.median_of(values)
    finite = [v for v in values if math.isfinite(v)]
    return {
        "median": _j(med),
        "ci95": [_j(lo), _j(hi)],
        "reached": len(finite) / len(values),
    }


def _j(x: float) -> "float | None":
    return x if math.isfinite(x) else None


def compare(a: list[float], b: list[float]) -> dict[str, Any]:
    """SHADHO's over a baseline's median, with a paired-bootstrap 95% interval."""
    r = sim.ratio_of_medians(np.asarray(a), np.asarray(b))
    lo, hi = sim.paired_bootstrap_ci(a, b, sim.ratio_of_medians)
    return {"ratio_of_medians": _j(r), "ci95": [_j(lo), _j(hi)]}


def run_setting(
    label: str,
    options: dict,
    entries: dict,
    overheads: dict,
    cost_scale: float,
    strategies: tuple[str, ...],
    seeds: int,
    budget: int,
    jobs: int,
    target: "float | None" = None,
    runner: "Callable[[dict[str, Any]], dict[str, Any]] | None" = None,
    variants: tuple[str, ...] = SHADHO,
) -> dict[str, Any]:
    """One setting (overheads, cost scale) over ``seeds`` paired seeds. ``runner(job)`` runs one
    seed (default :func:`run_seed`); ``variants`` are the strategies compared with the
    hardware-agnostic baselines."""
    print(
        f"setting {label}: {seeds} seeds x {budget} trials, overheads {overheads}, "
        f"costs x{cost_scale:g}, strategies {', '.join(strategies)}",
        flush=True,
    )
    work = [
        {
            "options": options,
            "entries": entries,
            "overheads": overheads,
            "cost_scale": cost_scale,
            "strategies": strategies,
            "seed": seed,
            "budget": budget,
        }
        for seed in range(seeds)
    ]
    t0 = time.perf_counter()
    runner = runner or run_seed
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as ex:
            per_seed = list(ex.map(runner, work))
    else:
        per_seed = [runner(w) for w in work]
    print(f"  {seeds} seeds in {time.perf_counter() - t0:.0f} s", flush=True)
    if target is None:
        target = statistics.median(
            min(loss for _, loss in s["runs"]["tpe_async"]["curve"]) for s in per_seed
        )
    pooled = sorted(r["loss"] for rows in entries.values() for r in rows)
    loose = pooled[max(0, math.ceil(0.01 * len(pooled)) - 1)]
    table: dict[str, dict[str, list]] = {}
    for name in strategies:
        rows = [s["runs"][name] for s in per_seed]
        table[name] = {
            "time_to_target_s": [time_to(r["curve"], target) for r in rows],
            "time_to_loose_target_s": [time_to(r["curve"], loose) for r in rows],
            "best_loss": [r["metrics"]["best_loss"] for r in rows],
            "makespan_s": [r["metrics"]["makespan_s"] for r in rows],
            "utilisation": [r["metrics"]["utilisation"] for r in rows],
            "trials_per_hour": [r["metrics"]["trials_per_hour"] for r in rows],
            "work_per_hour": [r["metrics"]["work_per_hour"] for r in rows],
            "cnn_trials": [r["metrics"]["cnn_trials"] for r in rows],
        }
        for key, value in rows[0]["metrics"].items():  # a runner's own counts (cnn_on_gpu)
            if key not in table[name] and key != "compute_s" and isinstance(value, int):
                table[name][key] = [r["metrics"][key] for r in rows]
        speeds = rows[0]["metrics"]["utilisation_by_speed"]
        for speed in speeds:
            table[name][f"utilisation_speed_{speed}"] = [
                r["metrics"]["utilisation_by_speed"][speed] for r in rows
            ]
    summary = {n: {k: describe(v) for k, v in cols.items()} for n, cols in table.items()}
    baselines = [n for n in AGNOSTIC if n in strategies]
    best = min(
        baselines,
        key=lambda n: (
            sim.median_of(table[n]["time_to_target_s"]),
            sim.median_of(table[n]["makespan_s"]),
        ),
    )
    shadho_vs: dict[str, dict[str, Any]] = {}
    goals: dict[str, Any] = {"best_agnostic_baseline": best}
    for variant in (v for v in variants if v in strategies):
        vs = shadho_vs[variant] = {
            base: {
                "time_to_target": compare(
                    table[variant]["time_to_target_s"], table[base]["time_to_target_s"]
                ),
                "time_to_loose_target": compare(
                    table[variant]["time_to_loose_target_s"], table[base]["time_to_loose_target_s"]
                ),
                "makespan": compare(table[variant]["makespan_s"], table[base]["makespan_s"]),
                "best_loss": sim.noninferiority(
                    table[variant]["best_loss"], table[base]["best_loss"], NONINFERIORITY_MARGIN
                ),
            }
            for base in baselines
        }
        ttt = vs[best]["time_to_target"]["ratio_of_medians"]
        goals[variant] = {
            "time_to_target_ratio_vs_best": ttt,
            "time_to_target_goal_met": ttt is not None and ttt <= 0.7,
        }
        for base in ("tpe_async", "optuna_async"):
            if base in vs:
                goals[variant][f"best_loss_not_worse_than_{base.split('_')[0]}"] = vs[base][
                    "best_loss"
                ]["not_worse"]
    placement = [s["placement_alone"] for s in per_seed if "placement_alone" in s]
    return {
        "seeds": seeds,
        "budget": budget,
        "overheads": overheads,
        "cost_scale": cost_scale,
        "target_loss": target,
        "loose_target_loss": loose,
        "loose_target_rule": "1st percentile of the pooled real losses",
        "summary": summary,
        "shadho_vs": shadho_vs,
        "goals": goals,
        "placement_alone_makespan_ratio_median": statistics.median(placement)
        if placement
        else None,
        "compute_s_per_seed": {
            n: statistics.mean(s["runs"][n]["metrics"]["compute_s"] for s in per_seed)
            for n in strategies
        },
        "per_seed": {
            n: {k: [_j(float(v)) for v in vals] for k, vals in cols.items()}
            for n, cols in table.items()
        },
        "curves_seed0": {n: per_seed[0]["runs"][n]["curve"] for n in strategies},
    }


# --- Overheads measured on a real run ---


def measure_overheads() -> dict[str, Any]:
    """Run workflows/hpo-digits for real (sticky executor, classes fast and slow, one trial at
    a time each) and read the overheads from its trial records' wall-clock stamps."""
    import yaml

    wd = fresh_copy(ROOT / "workflows" / "hpo-digits", WORK / "shadho-real")
    # One CPU per class: with two, the fast class's cross-validation starts a process pool
    # (n_jobs=2), which hung a sticky worker on this loaded machine; the overheads do not
    # depend on the classes' speeds.
    config_path = wd / "config" / "config.yaml"
    config = yaml.safe_load(config_path.read_text())
    for cls in config["hpo"]["hardware"].values():
        cls["cpus"] = 1
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
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
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(PLUGIN_ROOTS)}
    start = time.time()
    try:
        proc = subprocess.run(
            cmd, cwd=wd, capture_output=True, text=True, env=env, timeout=MEASURE_TIMEOUT_S
        )
    except subprocess.TimeoutExpired:
        sys.exit(
            f"the real run of workflows/hpo-digits took over {MEASURE_TIMEOUT_S} s: see "
            f"{wd / '.snakemake' / 'log'}"
        )
    wall = time.time() - start
    if proc.returncode:
        sys.exit(f"the real run failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    spec = shadho.load_spec(yaml.safe_load((wd / "config" / "config.yaml").read_text())["hpo"])
    history = shadho.read_jsonl(wd / f"results/hpo/rounds/{spec.rounds - 1}/history.jsonl")
    found = sim.overheads_from_records(history)
    found.update(
        {
            "how": (
                "workflows/hpo-digits run for real: " + " ".join(cmd[2:]) + "; per trial: median "
                "gap between a trial's end and the next start on the same class in a round; per "
                "round: median gap between a round's last end and the next round's first "
                "start, less the per-trial gap"
            ),
            "wall_s": round(wall, 1),
            "trials": len(history),
            "trial_seconds_total": round(sum(r["duration_s"] for r in history), 2),
            "startup_s": round(min(r["started"] for r in history) - start, 2),
        }
    )
    return found


def load_overheads(quick: bool) -> dict[str, float]:
    if OVERHEADS_FILE.exists():
        found = json.loads(OVERHEADS_FILE.read_text())
        return {"per_trial_s": found["per_trial_s"], "per_round_s": found["per_round_s"]}
    if quick:
        print("  no measured overheads yet (--measure-overheads): --quick runs without them")
        return {"per_trial_s": 0.0, "per_round_s": 0.0}
    sys.exit("no measured overheads: run python bench/shadho.py --measure-overheads first")


# --- Output ---


def plot(setting: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4))
    for name, curve in setting["curves_seed0"].items():
        best, xs, ys = math.inf, [], []
        for end, loss in curve:
            best = min(best, loss)
            xs.append(end)
            ys.append(best)
        ax.step(xs, ys, where="post", label=name)
    ax.axhline(setting["target_loss"], color="grey", ls=":", label="target")
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="simulated time (s)",
        ylabel="best loss",
        title="Best loss over time (seed 0, measured overheads)",
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    RESULTS.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def fmt(x: "float | None", digits: int = 2) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def print_setting(label: str, s: dict) -> None:
    print(f"== {label}: target loss {s['target_loss']:.4f}, {s['seeds']} seeds")
    for name, m in s["summary"].items():
        ttt, best, util = m["time_to_target_s"], m["best_loss"], m["utilisation"]
        per_speed = "  ".join(
            f"speed {k.rsplit('_', 1)[1]} {fmt(v['median'])}"
            for k, v in m.items()
            if k.startswith("utilisation_speed_")
        )
        print(
            f"{name:>15}: TTT {fmt(ttt['median'])} s [{fmt(ttt['ci95'][0])}, "
            f"{fmt(ttt['ci95'][1])}] (reached {ttt['reached']:.0%})  best "
            f"{fmt(best['median'], 4)} [{fmt(best['ci95'][0], 4)}, {fmt(best['ci95'][1], 4)}]  "
            f"makespan {fmt(m['makespan_s']['median'])} s  util {fmt(util['median'])} "
            f"({per_speed})"
        )
    for variant, base, r in ((v, b, r) for v, vs in s["shadho_vs"].items() for b, r in vs.items()):
        t, bl = r["time_to_target"], r["best_loss"]
        print(
            f"{variant} vs {base:>14}: TTT x{fmt(t['ratio_of_medians'])} [{fmt(t['ci95'][0])}, "
            f"{fmt(t['ci95'][1])}]  makespan x{fmt(r['makespan']['ratio_of_medians'])}  "
            f"best loss diff mean {bl['mean_difference']:+.4f} (upper 95% "
            f"{bl['upper_bound_mean_difference']:+.4f}, Wilcoxon p(worse) "
            f"{bl['wilcoxon_p_worse']:.3f}, better/equal/worse {bl['better_equal_worse']})"
        )
    print(f"goals: {s['goals']}")


def _ci(d: dict, digits: int = 2) -> str:
    return f"{fmt(d['median'], digits)} [{fmt(d['ci95'][0], digits)}, {fmt(d['ci95'][1], digits)}]"


def markdown(label: str, s: dict) -> str:
    """The setting's figures as Markdown tables (for docs/shadho-benchmark.md)."""
    speeds = sorted(
        (k for k in next(iter(s["summary"].values())) if k.startswith("utilisation_speed_")),
        key=lambda k: -float(k.rsplit("_", 1)[1]),
    )
    head = (
        "| strategy | time to target (s) | reached | time to loose target (s) | "
        "best loss at budget | makespan (s) | "
        "utilisation | " + " | ".join(f"util. speed {k.rsplit('_', 1)[1]}" for k in speeds) + " |"
    )
    lines = [
        f"Setting `{label}`: {s['seeds']} seeds x {s['budget']} trials, overheads "
        f"{s['overheads']}, costs x{s['cost_scale']:g}, target loss {s['target_loss']:.4f} "
        f"(loose target {s['loose_target_loss']:.4f}). "
        "Medians with 95% bootstrap intervals.",
        "",
        head,
        "|" + " --- |" * (7 + len(speeds)),
    ]
    for name, m in s["summary"].items():
        lines.append(
            f"| {name} | {_ci(m['time_to_target_s'])} | {m['time_to_target_s']['reached']:.0%} | "
            f"{_ci(m['time_to_loose_target_s'])} | "
            f"{_ci(m['best_loss'], 4)} | {_ci(m['makespan_s'], 1)} | "
            f"{fmt(m['utilisation']['median'])} | "
            + " | ".join(fmt(m[k]["median"]) for k in speeds)
            + " |"
        )
    lines += [
        "",
        "| SHADHO variant vs baseline | time to target, ratio of medians [95% CI] | time to "
        "loose target, ratio | makespan ratio | best loss: mean diff (upper 95%) | Wilcoxon p "
        "(worse) | better/equal/worse |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for variant, vs in s["shadho_vs"].items():
        for base, r in vs.items():
            t, bl = r["time_to_target"], r["best_loss"]
            lines.append(
                f"| {variant} vs {base} | {fmt(t['ratio_of_medians'])} [{fmt(t['ci95'][0])}, "
                f"{fmt(t['ci95'][1])}] | "
                f"{fmt(r['time_to_loose_target']['ratio_of_medians'])} | "
                f"{fmt(r['makespan']['ratio_of_medians'])} | "
                f"{bl['mean_difference']:+.4f} ({bl['upper_bound_mean_difference']:+.4f}) | "
                f"{bl['wilcoxon_p_worse']:.3f} | {'/'.join(map(str, bl['better_equal_worse']))} |"
            )
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="2 seeds x 80 trials, small pools")
    p.add_argument("--seeds", type=int, default=None, help="paired seeds (default 20; 2 quick)")
    p.add_argument("--jobs", type=int, default=2, help="worker processes for the seeds")
    p.add_argument("--budget", type=int, default=None, help="trials per search (default 120)")
    p.add_argument(
        "--pool", type=int, default=None, help="evaluated configurations per sub-space (60)"
    )
    p.add_argument(
        "--measure-overheads",
        action="store_true",
        help="run workflows/hpo-digits for real and record its overheads, then stop",
    )
    p.add_argument(
        "--slurm",
        action="store_true",
        help="only the real run on the local Slurm cluster, into bench/results/shadho.json",
    )
    p.add_argument("--slurm-seeds", type=int, default=4, help="seeds of the real Slurm run")
    p.add_argument(
        "--slurm-shared",
        action="store_true",
        help="both classes' workers in one 1-CPU Slurm job (when the shared cluster has one free)",
    )
    p.add_argument("--slurm-budget", type=int, default=48, help="trials per real search")
    args = p.parse_args()
    if args.measure_overheads:
        print("real run of workflows/hpo-digits for the overheads ...", flush=True)
        found = measure_overheads()
        RESULTS.mkdir(parents=True, exist_ok=True)
        OVERHEADS_FILE.write_text(json.dumps(found, indent=2) + "\n")
        print(
            f"per trial {found['per_trial_s']} s, per round {found['per_round_s']} s "
            f"({found['trials']} trials, {found['wall_s']} s wall, "
            f"{found['trial_seconds_total']} s in trials) -> {OVERHEADS_FILE}"
        )
        return
    if args.slurm:
        import _shadho_slurm

        previous = RESULTS / "shadho.json"
        result = json.loads(previous.read_text()) if previous.exists() else {}
        for stamp in ("benchmark", "date", "machine"):  # write_result stamps them anew
            result.pop(stamp, None)
        measured = measured_commit()  # the code that runs, read before a long run starts
        result["slurm_run"] = _shadho_slurm.main(
            workflow_options(), args.slurm_seeds, args.slurm_budget, args.slurm_shared
        )
        # The file's own "commit" is the simulation's; the real run records its own.
        result["slurm_run"]["commit"] = measured
        write_result("shadho", result)
        return
    seeds = args.seeds or (2 if args.quick else 20)
    budget = args.budget or (80 if args.quick else 120)
    pool_size = args.pool or (20 if args.quick else 60)
    options = workflow_options()
    spec = make_spec(options)
    entries = pool_entries(spec, pool_size)
    overheads = load_overheads(args.quick)
    result: dict[str, Any] = {
        "quick": args.quick,
        "setup": {
            "subspaces": list(options),
            "workers": HARDWARE,
            "round_size": ROUND_SIZE,
            "budget": budget,
            "pools": {
                name: {
                    "configs": len(rows),
                    "mean_cost_cpu_s": statistics.mean(r["cost"] for r in rows),
                    "max_cost_cpu_s": max(r["cost"] for r in rows),
                    "best_loss": min(r["loss"] for r in rows),
                    "median_loss": statistics.median(r["loss"] for r in rows),
                }
                for name, rows in entries.items()
            },
            "target_rule": "median over seeds of plain async TPE's final best loss (main setting)",
            "noninferiority_margin": NONINFERIORITY_MARGIN,
            "durations": "simulated: overhead + real CPU cost / worker speed",
        },
        "settings": {},
    }
    if OVERHEADS_FILE.exists():
        result["setup"]["overheads_measured"] = json.loads(OVERHEADS_FILE.read_text())
    main_setting = run_setting(
        "measured_overheads", options, entries, overheads, 1.0, MAIN, seeds, budget, args.jobs
    )
    result["settings"]["measured_overheads"] = main_setting
    target = main_setting["target_loss"]
    print_setting("measured_overheads", main_setting)
    plot(main_setting, RESULTS / ("shadho_quick.png" if args.quick else "shadho.png"))
    save(result, args.quick)  # after every setting: a long run interrupted keeps what it has
    if not args.quick:
        none = {"per_trial_s": 0.0, "per_round_s": 0.0}
        half = max(10, seeds // 2)
        for label, ov, scale in (("costs_x100", overheads, 100.0), ("no_overheads", none, 1.0)):
            s = run_setting(
                label, options, entries, ov, scale, SENSITIVITY, half, budget, args.jobs, target
            )
            result["settings"][label] = s
            print_setting(label, s)
            save(result, args.quick)


def save(result: dict, quick: bool) -> None:
    """Write the results (keeping the real Slurm run of an earlier --slurm) and their tables."""
    previous = RESULTS / "shadho.json"
    if not quick and previous.exists() and "slurm_run" in json.loads(previous.read_text()):
        result["slurm_run"] = json.loads(previous.read_text())["slurm_run"]
    path = write_result("shadho_quick" if quick else "shadho", dict(result))
    md = "\n\n".join(markdown(label, st) for label, st in result["settings"].items())
    path.with_suffix(".md").write_text(md + "\n")
    print(f"results: {path} (tables: {path.with_suffix('.md')})", flush=True)


if __name__ == "__main__":
    main()
