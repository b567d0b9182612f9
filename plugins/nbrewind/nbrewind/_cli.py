"""``nbrewind`` command line: run, pack, inspect, trust, import-lab, install-kernels."""

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Optional

from ._notebook import (
    NotebookError,
    format_table,
    import_lab,
    inspect,
    lab_records_path,
    pack,
    trust,
)
from ._review import CheckpointReview, format_review
from ._signing import SigningKeyError


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="nbrewind",
        description="Audit and repeat notebooks with cell checkpoints inside the .ipynb.",
    )
    sub = p.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="papermill with the nbrewind engine and kernel")
    run.add_argument("input", type=Path)
    run.add_argument("output", type=Path)
    run.add_argument("--repeat", action="store_true", help="repeat (default: audit)")
    run.add_argument(
        "-p",
        "--parameter",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "VALUE"),
        help="papermill parameter (value as in -p)",
    )
    run.add_argument("--cwd", default=None, help="working directory of the kernel")

    pk = sub.add_parser("pack", help="make a notebook portable: checkpoints inline or bundled")
    pk.add_argument("input", type=Path)
    pk.add_argument("output", type=Path)
    pk.add_argument(
        "--bundle",
        action="store_true",
        help="keep blobs in a .nbrewind/ store beside OUTPUT instead of inline",
    )
    pk.add_argument(
        "--with-inputs",
        action="store_true",
        help="also bundle the input files the records name into the .nbrewind/ store beside "
        "OUTPUT (a repeat where they are missing puts them back)",
    )
    pk.add_argument(
        "--cwd",
        type=Path,
        default=None,
        help="where the notebook ran (its relative input paths start there); default: the "
        "directory of INPUT",
    )

    ins = sub.add_parser("inspect", help="per-cell table: reads, writes, sizes, status")
    ins.add_argument("notebook", type=Path)

    tr = sub.add_parser(
        "trust",
        help="show what each checkpoint would import, then sign the records with your key",
    )
    tr.add_argument("notebook", type=Path)
    tr.add_argument("--yes", action="store_true", help="sign without asking")

    il = sub.add_parser(
        "import-lab", help="write the records kept while running NB in JupyterLab into NB"
    )
    il.add_argument("notebook", type=Path)

    ik = sub.add_parser("install-kernels", help="install the two kernelspecs")
    where = ik.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true")
    where.add_argument("--sys-prefix", action="store_true", help="the default")
    where.add_argument("--prefix", default=None)
    return p


def main(argv: Optional[list[str]] = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "run":
            return _run(args)
        if args.command == "pack":
            counts = pack(
                args.input,
                args.output,
                bundle=args.bundle,
                with_inputs=args.with_inputs,
                cwd=args.cwd,
            )
            what = "bundled in .nbrewind/" if args.bundle else "inline"
            n = counts["bundled"] if args.bundle else counts["inlined"]
            line = f"{args.output}: {n} checkpoint(s) {what}"
            if args.with_inputs:
                line += f", {counts['inputs']} input file(s) bundled in .nbrewind/"
            if counts.get("files_written"):
                line += f", {counts['files_written']} file(s) the cells wrote"
            print(line)
            if counts.get("inputs_skipped"):
                print(
                    f"nbrewind: {counts['inputs_skipped']} input(s) named by an absolute path "
                    "not bundled (they name this machine); see `nbrewind inspect`",
                    file=sys.stderr,
                )
            return 0
        if args.command == "inspect":
            print(format_table(inspect(args.notebook)))
            return 0
        if args.command == "trust":
            counts = trust(args.notebook, approve=None if args.yes else _ask(args.notebook))
            if counts["declined"]:
                print(f"{args.notebook}: nothing signed", file=sys.stderr)
                return 1
            print(
                f"{args.notebook}: {counts['signed']} cell record(s) signed, "
                f"{counts['already']} already trusted"
            )
            return 0
        if args.command == "import-lab":
            counts = import_lab(args.notebook)
            print(
                f"{args.notebook}: {counts['imported']} cell record(s) imported; "
                f"{counts['stale']} edited since they ran and {counts['missing']} never run "
                "(they will execute on repeat)"
            )
            if counts["refused"]:
                print(
                    f"nbrewind: refused {counts['refused']} record(s) of "
                    f"{lab_records_path(args.notebook)} not written by your nbrewind-audit "
                    "kernel (no valid MAC with your key): not imported, not signed",
                    file=sys.stderr,
                )
            return 0
        if args.command == "install-kernels":
            from ._install import install_kernels

            for path in install_kernels(user=args.user, prefix=args.prefix):
                print(f"installed {path}")
            return 0
    except (NotebookError, SigningKeyError) as e:
        print(f"nbrewind: {e}", file=sys.stderr)
        return 2
    return 1


def _ask(notebook: Path) -> Callable[[list[CheckpointReview]], bool]:
    def approve(reviews: list[CheckpointReview]) -> bool:
        print(format_review(reviews))
        dangerous = sum(1 for r in reviews if r.dangerous)
        if dangerous:
            print(f"{dangerous} checkpoint(s) import globals that can run code (marked <--).")
        try:
            answer = input(
                f"Sign the records of {notebook} with your key? Repeat will then unpickle "
                "these checkpoints, importing and calling what is listed above. [y/N] "
            )
        except EOFError:
            answer = ""
        return answer.strip().lower() in ("y", "yes")

    return approve


def _run(args: argparse.Namespace) -> int:
    import papermill
    from papermill.cli import _resolve_type
    from papermill.engines import papermill_engines

    from ._engine import NBRewindEngine, NBRewindError

    if "nbrewind" not in papermill_engines._engines:  # importable but not installed
        papermill_engines.register("nbrewind", NBRewindEngine)

    # papermill answers these with a traceback: one line each instead (issue 31).
    if not Path(args.input).is_file():
        raise NotebookError(f"{args.input}: no such notebook")
    folder = Path(args.output).parent
    if not folder.is_dir():
        raise NotebookError(f"{args.output}: its folder {folder} does not exist; create it first")
    params = {name: _resolve_type(value) for name, value in args.parameter}
    try:
        papermill.execute_notebook(
            str(args.input),
            str(args.output),
            parameters=params,
            kernel_name="nbrewind-repeat" if args.repeat else "nbrewind-audit",
            engine_name="nbrewind",
            cwd=args.cwd,
            progress_bar=False,
        )
    except papermill.PapermillExecutionError as e:
        print(f"nbrewind: {e}", file=sys.stderr)
        return 1
    except NBRewindError as e:  # the kernels not installed, say
        print(f"nbrewind: {e}", file=sys.stderr)
        return 2
    return 0
