"""``python -m ckptstore``: maintain a checkpoint store.

python -m ckptstore gc STORE --keep-runs N   # drop what the latest N runs did not use
python -m ckptstore verify STORE             # re-hash every object; set bad ones aside
python -m ckptstore explain STORE [OUTPUT..] # why the jobs making OUTPUTs last reran
"""

import argparse
import sys
from pathlib import Path
from typing import NoReturn

from ._records import DIGEST
from .explain import explain_outputs
from .store import CheckpointStore, StoreError, file_digest


class _Parser(argparse.ArgumentParser):
    """Bad arguments are one line (what is wrong, and where to look), not a usage dump."""

    def error(self, message: str) -> "NoReturn":
        self.exit(2, f"error: {message} (see: {self.prog} --help)\n")


def main(argv: "list[str] | None" = None) -> int:
    parser = _Parser(prog="python -m ckptstore", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    gc = sub.add_parser("gc", help="delete keys and objects the latest N runs did not use")
    gc.add_argument("store", type=Path)
    gc.add_argument("--keep-runs", type=int, default=5, help="runs whose keys stay (default 5)")
    verify = sub.add_parser("verify", help="check every object against its hash")
    verify.add_argument("store", type=Path)
    explain = sub.add_parser(
        "explain", help="why the jobs making the given outputs last reran (all if none given)"
    )
    explain.add_argument("store", type=Path)
    explain.add_argument(
        "outputs", nargs="*", help="output paths, relative to the workflow's directory"
    )
    args = parser.parse_args(argv)
    if args.command == "gc" and args.keep_runs < 1:
        print(
            f"error: --keep-runs must be at least 1 (got {args.keep_runs}): gc keeps the keys "
            "of the latest N runs that restored or stored something",
            file=sys.stderr,
        )
        return 2
    try:
        store = CheckpointStore(args.store, create=False)
        if args.command == "gc" and store.read_only:
            raise StoreError(f"{store.root} is read-only: gc needs to write to it")
    except StoreError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    try:
        return _command(store, args)
    finally:
        for problem in store.problems:
            print(f"warning: {problem}", file=sys.stderr)


def _command(store: CheckpointStore, args: argparse.Namespace) -> int:
    if args.command == "gc":
        report = store.gc(args.keep_runs)
        store.problems.extend(report.problems)
        print(
            f"kept the keys of {report.kept_runs} run(s); deleted {report.deleted_keys} "
            f"key(s) and {report.deleted_objects} object(s), {report.freed_bytes} bytes; "
            f"{report.protected_by_active_runs} recent object(s) protected"
        )
        return 0
    if args.command == "explain":
        found = [e.render() for e in explain_outputs(store, args.outputs or None)]
        for line in found:
            print(line)
        if not found:
            which = ", ".join(args.outputs) if args.outputs else "any output"
            print(f"the store remembers no job making {which}", file=sys.stderr)
            return 1
        return 0
    bad = 0
    for obj in sorted(store.root.glob("objects/*/*")):
        digest = "sha256:" + obj.parent.name + obj.name
        if not DIGEST.fullmatch(digest) or file_digest(obj) != digest:
            bad += 1
            print(f"corrupt: {digest} ({obj})")
            store._quarantine(obj)
    print(f"{bad} corrupt object(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
