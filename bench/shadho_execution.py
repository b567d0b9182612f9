"""Real utilisation per hardware class: barrier rounds, pipelined rounds, no rounds (issue 16).

Runs ``workflows/hpo-digits`` (real SVM and CNN trials on the digits data, two local classes:
fast = 2 threads, slow = 1 thread, capped at one trial each with ``--resources``) with the real
Snakemake, twice per repetition, interleaved:

- ``barrier``: the old setting, 5 rounds of 8 trials, ``pipeline_depth: 1`` (each round waits
  for the slowest trial and the bookkeeping of the one before);
- ``pipelined``: the example's setting, 10 rounds of 4, ``pipeline_depth: 2``;
- ``async``: ``execution: async``, one job driving one long-lived worker per class, each
  taking its next trial the moment it frees (the same 40 trials, plans of 8).

Same budget (40 trials), seed and cores (4: three for the trials' threads, one for the
bookkeeping). It reports the wall time and each class's utilisation (busy time over wall time,
from the report), and the best loss. ``--quick``: 12 trials on an SVM-only space.

    python bench/shadho_execution.py [--quick] [--repeats N]
"""

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))  # noqa: E402 (this file's helpers)
from _common import PLUGINS_PATH, ROOT, fresh_copy, snakemake, timed, write_result  # noqa: E402

sys.path.pop(0)

SETTINGS = {
    "barrier": {"pipeline_depth": 1, "rounds": 5, "trials_per_round": 8},
    "pipelined": {"pipeline_depth": 2, "rounds": 10, "trials_per_round": 4},
    "async": {"execution": "async", "rounds": 5, "trials_per_round": 8},
}
QUICK = {
    "barrier": {"pipeline_depth": 1, "rounds": 2, "trials_per_round": 6},
    "pipelined": {"pipeline_depth": 2, "rounds": 4, "trials_per_round": 3},
    "async": {"execution": "async", "rounds": 2, "trials_per_round": 6},
}


def run_once(name: str, settings: dict, quick: bool, work: Path) -> dict:
    import pandas as pd

    target = fresh_copy(ROOT / "workflows" / "hpo-digits", work / name)
    config = yaml.safe_load((target / "config" / "config.yaml").read_text())
    config["hpo"].update(settings)
    if quick:
        options = config["hpo"]["space"]["model"]["exclusive"]
        options.pop("cnn")
        config["hpo"].pop("requires", None)
        config["hpo"]["objective_args"] = {"folds": 3, "n_samples": 600}
    (target / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    cmd = snakemake(
        "--executor", "local", "--cores", "4", "--scheduler", "greedy",
        "--resources", "hw_fast=1", "hw_slow=1",
    )  # fmt: skip
    wall = timed(cmd, target, {"PYTHONPATH": PLUGINS_PATH, "OMP_NUM_THREADS": "1"})
    classes = pd.read_csv(target / "results/hpo/report/classes.csv").set_index("hw_class")
    best = yaml.safe_load((target / "results/hpo/report/best.json").read_text())["best"]
    return {
        "wall_s": round(wall, 2),
        "utilisation": {c: round(float(v), 3) for c, v in classes["utilisation"].items()},
        "measured_speed": {c: float(v) for c, v in classes["measured_speed"].items()},
        "trials": int(classes["trials"].sum()),
        "best_loss": best["loss"] if best else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args()
    settings = QUICK if args.quick else SETTINGS
    runs: dict[str, list[dict]] = {name: [] for name in settings}
    with tempfile.TemporaryDirectory(prefix="shadho-exec-") as tmp:
        for rep in range(args.repeats):
            order = list(settings) if rep % 2 == 0 else list(settings)[::-1]
            for name in order:
                result = run_once(name, settings[name], args.quick, Path(tmp) / f"{rep}")
                runs[name].append(result)
                print(name, result, flush=True)
    summary = {}
    for name, results in runs.items():
        summary[name] = {
            "wall_s": statistics.median(r["wall_s"] for r in results),
            "utilisation": {
                c: statistics.median(r["utilisation"][c] for r in results)
                for c in results[0]["utilisation"]
            },
        }
    ratio = summary["pipelined"]["wall_s"] / summary["barrier"]["wall_s"]
    ratio_async = summary["async"]["wall_s"] / summary["barrier"]["wall_s"]
    print(f"wall time pipelined / barrier: {ratio:.2f}, async / barrier: {ratio_async:.2f}")
    for name, s in summary.items():
        print(f"{name:10s} wall {s['wall_s']:7.1f} s  utilisation {s['utilisation']}")
    path = write_result(
        "shadho_execution" + ("_quick" if args.quick else ""),
        {
            "settings": settings,
            "repeats": args.repeats,
            "cpus_available": os.cpu_count(),
            "runs": runs,
            "summary": summary,
            "wall_ratio_pipelined_over_barrier": round(ratio, 3),
            "wall_ratio_async_over_barrier": round(ratio_async, 3),
        },
    )
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
