"""The package's command line, run in child processes: ``python -m etl.cli emit|fold|score``."""

import argparse
import os
import sys

from . import stats
from .schema import Table

EMIT_MIN_FLOW = 5.0
FOLD_PERIOD = 4


def emit(args: argparse.Namespace) -> None:
    """Print ``phase<TAB>load`` for every row whose flow reaches EMIT_MIN_FLOW."""
    table = Table.from_csv(args.path)
    columns = (table.column("t"), table.column("flow"), table.column("load"))
    for t, flow, load in zip(*columns, strict=True):
        if flow >= EMIT_MIN_FLOW:
            print(f"{int(t) % FOLD_PERIOD}\t{load:.4f}")


def fold(args: argparse.Namespace) -> None:
    """Sum the loads read from stdin per phase, scaled."""
    sums: dict = {}
    for line in sys.stdin:
        phase, value = line.split("\t")
        sums[phase] = sums.get(phase, 0.0) + float(value) * args.scale
    for phase in sorted(sums):
        print(f"{phase}\t{sums[phase]:.4f}")


def score(args: argparse.Namespace) -> None:
    """Print ``name<TAB>score`` for every part file."""
    for path in args.paths:
        table = Table.from_csv(path)
        print(f"{os.path.basename(path)}\t{stats.score_table(table, args.window)}")


COMMANDS = {"emit": emit, "fold": fold, "score": score}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="etl.cli")
    sub = parser.add_subparsers(dest="cmd", required=True)
    sub.add_parser("emit").add_argument("path")
    sub.add_parser("fold").add_argument("--scale", type=float, required=True)
    scorer = sub.add_parser("score")
    scorer.add_argument("--window", type=int, required=True)
    scorer.add_argument("paths", nargs="*")
    args = parser.parse_args(argv)
    COMMANDS[args.cmd](args)


if __name__ == "__main__":
    main()
