"""``python -m snakemake_shadho``: the steps of a round, for rules and for people.

    python -m snakemake_shadho validate SPEC    check a spec (YAML/JSON; the hpo: entry)
    python -m snakemake_shadho plan SPEC --round R --out PLAN [--history H] [--previous-plan P]
                                    [--pending PLAN ...]
    python -m snakemake_shadho merge --plan PLAN --out HISTORY [--history H] TRIAL.json ...
    python -m snakemake_shadho report SPEC --history H --out REPORT.md PLAN.json ...
    python -m snakemake_shadho search SPEC --out DIR [--report REPORT.md] [--search-dir D ...]
                                    [--budget N]

``search`` runs the whole search asynchronously on sticky workers (no rounds: a worker that
frees takes its class's next trial, see snakemake_shadho._driver).

SPEC is a YAML or JSON file holding the search's config (either the ``hpo:`` mapping itself
or a config with an ``hpo:`` entry). User errors print one line naming the problem and exit 2.
"""

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from ._errors import ShadhoError, SpecError
from ._failures import check_failures, failure_summary
from ._history import merge_round
from ._store import read_json, read_jsonl, write_json, write_jsonl

if TYPE_CHECKING:
    from ._spec import SearchSpec

_RERUN_ROUNDS = (
    "to redo those trials, delete their records (rounds/ROUND/trials/CLASS/TRIAL.json) and run "
    "again"
)

# Planning, validating and reporting import hyperopt (through the spec); merging does not.


def read_spec(path: str) -> "SearchSpec":
    """Load and validate the spec in a YAML or JSON file."""
    import yaml

    from ._spec import load_spec

    try:
        config: Any = yaml.safe_load(Path(path).read_text())
    except OSError as e:
        raise ShadhoError(f"cannot read the spec file {path}: {e.strerror or e}") from e
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f"{path}, line {mark.line + 1}, column {mark.column + 1}" if mark else path
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise ShadhoError(f"{where}: not valid YAML ({problem}); fix the file there") from e
    if isinstance(config, dict) and "hpo" in config:
        config = config["hpo"]
    return load_spec(config, "hpo")


def _plan(args: argparse.Namespace) -> None:
    from ._requirements import check_requirements
    from ._rounds import plan_round

    spec = read_spec(args.spec)
    if args.round == 0:
        check_requirements(spec)
    history = read_jsonl(args.history) if args.history else []
    check_failures(history, spec.max_failed_trials, _RERUN_ROUNDS)
    previous = read_json(args.previous_plan)["ranking"] if args.previous_plan else None
    pending = [t for path in args.pending for t in read_json(path)["trials"]]
    write_json(args.out, plan_round(spec, args.round, history, previous, pending=pending))


def _merge(args: argparse.Namespace) -> None:
    history = read_jsonl(args.history) if args.history else []
    results = [read_json(path) for path in args.trials]
    write_jsonl(args.out, merge_round(history, read_json(args.plan), results))


def _report(args: argparse.Namespace) -> None:
    from .report import write_report

    spec = read_spec(args.spec)
    history = read_jsonl(args.history)
    check_failures(history, spec.max_failed_trials, _RERUN_ROUNDS)
    write_report(spec, history, [read_json(p) for p in args.plans], args.out)
    print(failure_summary(history, spec.max_failed_trials), file=sys.stderr)


def _search(args: argparse.Namespace) -> None:
    from ._driver import run_search
    from ._requirements import check_requirements

    spec = read_spec(args.spec)
    check_requirements(spec)
    history = run_search(spec, args.spec, args.out, args.search_dir, args.budget)
    if args.report:
        from .report import write_report

        write_report(spec, history, read_json(Path(args.out) / "plans.json"), args.report)
    print(failure_summary(history, spec.max_failed_trials), file=sys.stderr)


def _validate(args: argparse.Namespace) -> None:
    from ._trial import objective_problem

    spec = read_spec(args.spec)
    # The rule module looks for a local objective in the workflow's folder and its scripts/:
    # validate runs there.
    problem = objective_problem(spec.objective, [".", "scripts"]) if spec.objective else None
    if problem is not None:
        raise SpecError("hpo.objective", problem)
    print(
        f"ok: {len(spec.subspaces)} sub-spaces ({', '.join(spec.subspaces)}), "
        f"{len(spec.classes)} hardware classes ({', '.join(spec.classes)}), "
        f"{spec.budget} trials in {spec.rounds} rounds"
    )


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m snakemake_shadho", description=__doc__.split("\n")[0]
    )
    sub = p.add_subparsers(dest="command", required=True)
    v = sub.add_parser("validate", help="check a search spec")
    v.add_argument("spec")
    v.set_defaults(run=_validate)
    pl = sub.add_parser("plan", help="plan one round")
    pl.add_argument("spec")
    pl.add_argument("--round", type=int, required=True)
    pl.add_argument("--history")
    pl.add_argument("--previous-plan")
    pl.add_argument("--pending", nargs="*", default=[], help="plans whose trials are running")
    pl.add_argument("--out", required=True)
    pl.set_defaults(run=_plan)
    m = sub.add_parser("merge", help="fold a round's trial records into the history")
    m.add_argument("--plan", required=True)
    m.add_argument("--history")
    m.add_argument("--out", required=True)
    m.add_argument("trials", nargs="*")
    m.set_defaults(run=_merge)
    r = sub.add_parser("report", help="write the search report")
    r.add_argument("spec")
    r.add_argument("--history", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("plans", nargs="+")
    r.set_defaults(run=_report)
    se = sub.add_parser("search", help="run the whole search asynchronously (no rounds)")
    se.add_argument("spec")
    se.add_argument("--out", required=True, help="folder of history.jsonl and plans.json")
    se.add_argument("--report", help="write the report here at the end")
    se.add_argument("--search-dir", action="append", default=[], help="where the objective is")
    se.add_argument("--budget", type=int, help="trials in all (default: the spec's budget)")
    se.set_defaults(run=_search)
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parser().parse_args(argv)
    try:
        args.run(args)
    except SpecError as e:
        print(f"shadho: {e}", file=sys.stderr)
        return 2
    except (ShadhoError, ValueError) as e:
        print(f"shadho: {e}", file=sys.stderr)
        return 2
    return 0
