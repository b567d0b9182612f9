"""The generated differential test of checkpoint-aware rule skipping, at a larger count.

For each seed: a random workflow of SUBS sub-workflows, ROUNDS rounds of one random edit per
sub-workflow; each round runs a new site with the store and a fresh site without it, and
compares every output (kind, bytes, mode, link target), and counts jobs that reran although
their dependencies did not change (see tests/integration/snakemake_executor_plugin_sticky/
ckpt_differential.py). Every edit kind runs, template helper modules and outside inputs of
one base name included.

    python bench/checkpoint_differential.py            # 4 seeds x 60 sub-workflows x 8 rounds
    python bench/checkpoint_differential.py --quick    # 1 seed x 10 x 2
"""

import argparse
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import ROOT, WORK, write_result  # noqa: E402

sys.path.insert(0, str(ROOT / "tests" / "integration" / "snakemake_executor_plugin_sticky"))
import ckpt_differential as cd  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 seed, 10 sub-workflows, 2 rounds")
    parser.add_argument("--seeds", type=int, default=None)
    parser.add_argument("--subs", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=None, help="edited rounds per seed")
    args = parser.parse_args()
    seeds = args.seeds or (1 if args.quick else 4)
    subs = args.subs or (10 if args.quick else 60)
    rounds = args.rounds or (2 if args.quick else 8)
    kinds, global_kinds, twins = cd.EDITS, cd.GLOBAL_EDITS, True  # cd.PENDING is empty
    base = WORK / "checkpoint_differential"
    cases = ran = restored = 0
    divergences: list[str] = []
    unnecessary: list[str] = []
    edits: dict[str, int] = {}
    start = time.perf_counter()
    for seed in range(seeds):
        shutil.rmtree(base, ignore_errors=True)
        diff = cd.Differential(base, seed, subs, kinds, global_kinds, twins=twins)
        for _ in range(rounds + 1):
            result = diff.run_round()
            cases += result.cases
            if result.cases:
                ran += result.ran
                restored += result.restored_jobs
            divergences += [f"seed {seed} round {diff.round - 1}: {d}" for d in result.divergences]
            unnecessary += [f"seed {seed} round {diff.round - 1}: {u}" for u in result.unnecessary]
            for kind, n in result.edits.items():
                edits[kind] = edits.get(kind, 0) + n
            print(
                f"  seed {seed} round {diff.round - 1}: {result.cases} cases, {result.ran} "
                f"ran, {result.restored_jobs} restored, {len(result.divergences)} divergences, "
                f"{len(result.unnecessary)} unnecessary reruns",
                flush=True,
            )
    seconds = time.perf_counter() - start
    print(f"\ncheckpoint differential: {cases} generated cases in {seconds:.0f} s")
    print(f"  divergences: {len(divergences)}")
    print(f"  unnecessary reruns: {len(unnecessary)} (of {ran} jobs that ran after edits)")
    print(f"  jobs restored after edits: {restored}")
    for line in divergences[:20] + unnecessary[:20]:
        print("   ", line)
    path = write_result(
        "checkpoint_differential",
        {
            "quick": args.quick,
            "seeds": seeds,
            "sub_workflows": subs,
            "rounds": rounds,
            "cases": cases,
            "divergences": divergences,
            "unnecessary_reruns": unnecessary,
            "jobs_ran_after_edits": ran,
            "jobs_restored_after_edits": restored,
            "edits": edits,
            "seconds": round(seconds, 1),
        },
    )
    print(f"  written: {path.relative_to(ROOT)}")
    if divergences:
        sys.exit(1)


if __name__ == "__main__":
    main()
