"""NBRewind's differential fuzzer at a larger count than CI: sameness and needless re-execution.

Each batch is one generated notebook of many cases (see tests/integration/nbrewind/fuzz.py):
audited, edited (parameters, constants, lines, inserted cells), repeated with
``nbrewind-repeat``, and compared cell by cell, plus the final namespace and files, with a fresh
run of the edited notebook under the stock ``python3`` kernel from the same files.

    python bench/nbrewind_fuzz.py            # 40 batches x 50 cases = 2000 cases
    python bench/nbrewind_fuzz.py --quick    # 2 batches x 25 cases (under a minute or two)

Figures: divergent cases (the contract: 0), cells re-executed, of which unnecessary (the cell's
source, outputs, written values and files all came out as in the audit), cells restored.
"""

import argparse
import importlib.util
import sys
import tempfile
import time
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
_spec = importlib.util.spec_from_file_location("_bench_common", _HERE / "_common.py")
_common = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_common)
_fspec = importlib.util.spec_from_file_location(
    "_nbrewind_fuzz", _common.ROOT / "tests" / "integration" / "nbrewind" / "fuzz.py"
)
fuzz = importlib.util.module_from_spec(_fspec)
_fspec.loader.exec_module(fuzz)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--batches", type=int)
    parser.add_argument("--cases", type=int)
    parser.add_argument("--seed", type=int, default=90_000)
    args = parser.parse_args()
    batches = args.batches or (2 if args.quick else 40)
    cases = args.cases or (25 if args.quick else 50)
    totals = {"cases": 0, "divergent": 0, "executed": 0, "unnecessary": 0, "restored": 0}
    failures: list[str] = []
    start = time.perf_counter()
    for batch in range(batches):
        with tempfile.TemporaryDirectory(prefix="nbrewind-fuzz-") as tmp:
            result = fuzz.run_batch(args.seed + batch, cases, Path(tmp))
        totals["cases"] += result.cases
        totals["divergent"] += len(result.divergent_cases) + int(result.final_diverged)
        totals["executed"] += result.executed
        totals["unnecessary"] += result.unnecessary
        totals["restored"] += result.restored
        failures += [f"seed {args.seed + batch}: {d[:400]}" for d in result.details]
        print(
            f"batch {batch + 1}/{batches} (seed {args.seed + batch}): "
            f"{len(result.divergent_cases)} divergent, {result.executed} re-executed "
            f"({result.unnecessary} unnecessary), {result.restored} restored",
            flush=True,
        )
    seconds = time.perf_counter() - start
    share = totals["unnecessary"] / max(totals["executed"], 1)
    print(
        f"{totals['cases']} cases: {totals['divergent']} divergent; "
        f"{totals['executed']} cells re-executed, {totals['unnecessary']} unnecessary "
        f"({share:.1%}); {totals['restored']} restored; {seconds:.0f} s"
    )
    path = _common.write_result(
        "nbrewind_fuzz",
        {
            "quick": args.quick,
            "batches": batches,
            "cases_per_batch": cases,
            "seed": args.seed,
            **totals,
            "unnecessary_share": round(share, 4),
            "seconds": round(seconds, 1),
            "failures": failures[:20],
        },
    )
    print(f"wrote {path}")
    if totals["divergent"]:
        sys.exit(1)


if __name__ == "__main__":
    main()
