"""``python -m distea``: impact queries from the command line.

    python -m distea impact --logs DIR --change func:wflib.text.normalize [--change ...]
                            [--explain [summary|full]] [--json] [--report report.md]
    python -m distea list --logs DIR        # what can be queried: functions, rules, ...

Exit status 0 on success, 2 for bad input (the message names the file, line or argument and
what to do), never a traceback for a user error.
"""

import argparse
import json
import sys
from pathlib import Path
from typing import Optional

from ._parse import LogFormatError, read_logs
from ._query import Change, ChangeSyntaxError, impact


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m distea", description="Post-hoc impact analysis of Snakemake runs."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    query = sub.add_parser("impact", help="what a change impacts, and why")
    query.add_argument("--logs", required=True, help="folder of DISTEA logs (DISTEA_TRACE)")
    query.add_argument(
        "--change",
        action="append",
        required=True,
        help="func:pkg.mod.fn | rule:NAME | param:RULE.NAME | file:PATH | template:NAME "
        "(repeat for several; the result is their union)",
    )
    query.add_argument(
        "--explain",
        nargs="?",
        const="full",
        default="summary",
        choices=("summary", "full"),
        help="summary (the default: counts, impacted jobs by rule, the most common chains, "
        "warnings) or full (every function, job and output with its causal chain; "
        "--explain alone); --json follows it too",
    )
    query.add_argument("--json", action="store_true", help="machine-readable output")
    query.add_argument("--report", type=Path, help="also write a Markdown report (+ .png)")
    query.add_argument(
        "--quiet", action="store_true", help="with --json, do not repeat warnings on stderr"
    )
    listing = sub.add_parser("list", help="functions, rules, parameters, templates, files seen")
    listing.add_argument("--logs", required=True)
    return parser


def main(argv: Optional[list[str]] = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "impact":
            changes = [Change.parse(c) for c in args.change]
            return _impact(args, changes)
        return _list(args)
    except (LogFormatError, ChangeSyntaxError) as e:
        print(f"distea: error: {e}", file=sys.stderr)
        return 2
    except ImportError as e:
        print(
            f"distea: error: {e.name} is missing; install the analysis extra: "
            "pip install 'snakemake-sticky-hpc[impact]'",
            file=sys.stderr,
        )
        return 2


def _impact(args: argparse.Namespace, changes: list[Change]) -> int:
    from ._order import build_order
    from ._report import markdown, summary, summary_data, table

    trace = read_logs(args.logs)
    order = build_order(trace)
    result = impact(order, changes)
    warnings = [*trace.warnings, *result.warnings]
    if not args.quiet and args.json:
        for warning in warnings:
            print(f"distea: warning: {warning}", file=sys.stderr)
    full = args.explain == "full"
    if args.json and not full:
        names = {
            level: [i.name for i in items]
            for level, items in (("functions", result.functions), ("outputs", result.outputs))
        }
        payload: dict[str, object] = {
            "changes": [str(c) for c in changes],
            "detail": "summary (every chain: --explain full)",
            **summary_data(result),
            "functions": sorted(set(names["functions"])),
            "outputs": names["outputs"],
            "jobs": [
                {
                    "name": i.name,
                    "proven": i.name not in result.conservative,
                    **(
                        {"conservative": result.conservative[i.name]}
                        if i.name in result.conservative
                        else {}
                    ),
                }
                for i in result.jobs
            ],
            "warnings": warnings,
            "justified": result.justified,
        }
        print(json.dumps(payload, indent=1))
    elif args.json:
        payload = {
            "changes": [str(c) for c in changes],
            "detail": "full",
            "sources": [{"where": w, "clock": c, "what": what} for w, c, what in result.sources],
            **{
                level: [
                    {"name": i.name, "context": i.context, "chain": list(i.chain)} for i in items
                ]
                for level, items in (("functions", result.functions), ("outputs", result.outputs))
            },
            # proven: the logs show the change reaching the job; otherwise it is included
            # conservatively (an untraced or incomplete trace, a blind spot), and why.
            "jobs": [
                {
                    "name": i.name,
                    "context": i.context,
                    "chain": list(i.chain),
                    "proven": i.name not in result.conservative,
                    **(
                        {"conservative": result.conservative[i.name]}
                        if i.name in result.conservative
                        else {}
                    ),
                }
                for i in result.jobs
            ],  # fmt: skip
            # Blind spots of this answer: an empty list means the answer is complete.
            "warnings": warnings,
            "justified": result.justified,
        }
        print(json.dumps(payload, indent=1))
    else:
        text = table(result, explain=True, warnings=warnings) if full else summary(result, warnings)
        sys.stdout.write(text)
    if args.report:
        path = markdown(order, result, args.report)
        print(f"report: {path}", file=sys.stderr)
    return 0


def _list(args: argparse.Namespace) -> int:
    trace = read_logs(args.logs)
    rules = sorted({j.rule for j in trace.jobs.values()})
    params = sorted(
        {
            f"{(j or '').split('[', 1)[0]}.{n}"
            for p in trace.processes.values()
            for n, _, j in p.params
        }
    )
    templates = sorted({t for p in trace.processes.values() for t, _ in p.templates})
    files = sorted({f for j in trace.jobs.values() for f, _ in j.inputs})
    for title, items in (
        ("rules", rules),
        ("functions", sorted(trace.functions)),
        ("params", params),
        ("templates", templates),
        ("input files", files),
    ):
        print(f"{title} ({len(items)}):")
        for item in items:
            print(f"  {item}")
    return 0
