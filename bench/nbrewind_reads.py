"""NBRewind: what observing reads as they happen costs in notebook code, per mechanism.

Issue 27 asks for reads recorded as they happen, and to measure how. Two mechanisms, on the
same notebook-style code (a small notebook function called in a Python loop, which reads a
global, a module and builtins: the worst case for any per-read hook; vectorised numpy or
pandas code does a few lookups per call and pays nothing measurable):

- ``stock``: the code as the stock kernel compiles it, in a plain ``dict`` namespace;
- ``hook`` (what the kernels do): the cell compiled through :class:`nbrewind._dataflow.
  ReadInstrumenter`, every notebook function reporting the globals it may read at each call
  (``__nbrewind_ran__``: a C-level lookup in the kernel's table once the names were seen in
  the cell), recording on;
- ``recording-dict``: a namespace that records every lookup (a ``dict`` subclass with its
  own ``__getitem__``; CPython 3.11 then takes the slow path for every global and builtin
  lookup), the other mechanism the issue names.

Runs are interleaved (stock, hook, recording-dict, repeated) and each ratio is the median of
per-round ratios against the stock run of the same round.

    python bench/nbrewind_reads.py           # 300 000 calls, 9 rounds
    python bench/nbrewind_reads.py --quick   # 100 000 calls, 3 rounds
"""

import argparse
import ast
import builtins
import importlib.util
import statistics
import sys
import time
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
_spec = importlib.util.spec_from_file_location("_bench_common", _HERE / "_common.py")
_common = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_common)
write_result = _common.write_result

from nbrewind._dataflow import READ_HOOK, ReadInstrumenter, SeenCode  # noqa: E402

CELL = """
import math
OFFSET = 3

def score(i):
    return len(str(i)) + math.floor(i / 7) + OFFSET

def run(n):
    total = 0
    for i in range(n):
        total += score(i)
    return total
"""


class RecordingDict(dict):
    """Records every lookup (name -> first value); builtins fall through as in CPython."""

    __slots__ = ("reads",)

    def __getitem__(self, key: str) -> Any:
        value = dict.__getitem__(self, key)
        reads = self.reads
        if key not in reads:
            reads[key] = value
        return value


def run_once(kind: str, calls: int) -> float:
    tree = ast.parse(CELL)
    if kind == "hook":
        tree = ReadInstrumenter().visit(tree)
        seen = SeenCode()  # the kernel's table, recording on
        names: set[str] = set()
        seen.on_first = names.update
        setattr(builtins, READ_HOOK, seen.__getitem__)
    code = compile(ast.fix_missing_locations(tree), "<cell>", "exec")
    ns: dict[str, Any]
    if kind == "recording-dict":
        ns = RecordingDict(__builtins__=builtins)
        ns.reads = {}  # type: ignore[attr-defined]
    else:
        ns = {"__builtins__": builtins}
    exec(code, ns, ns)
    started = time.perf_counter()
    ns["run"](calls)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    calls, rounds = (100_000, 3) if args.quick else (300_000, 9)
    kinds = ("stock", "hook", "recording-dict")
    times: dict[str, list[float]] = {k: [] for k in kinds}
    for _ in range(rounds):
        for kind in kinds:
            times[kind].append(run_once(kind, calls))
    ratios = {
        kind: statistics.median(t / s for t, s in zip(times[kind], times["stock"], strict=True))
        for kind in kinds[1:]
    }
    result = {
        "calls": calls,
        "rounds": rounds,
        "seconds_median": {k: round(statistics.median(v), 4) for k, v in times.items()},
        "ratio_to_stock": {k: round(v, 3) for k, v in ratios.items()},
        "per_call_overhead_us": {
            k: round(
                (statistics.median(times[k]) - statistics.median(times["stock"])) / calls * 1e6, 3
            )
            for k in kinds[1:]
        },
    }
    print(f"{calls} calls of a small notebook function, {rounds} interleaved rounds")
    for kind in kinds:
        ratio = "" if kind == "stock" else f"  {ratios[kind]:.2f}x stock"
        print(f"  {kind:15s} {result['seconds_median'][kind]:.3f} s{ratio}")
    write_result("nbrewind_reads", result)


if __name__ == "__main__":
    main()
