"""DISTEA on workflows it was not designed for: generated mutants, ground truth by re-running.

For each subject (``subjects/``: ``sensorqc`` with a sticky worker, a dispatch table and
``params.get``; ``snakehelpers`` with helper code run by Snakemake's own process and an
untraced shell job; ``dispatch`` with a decorator registry, ``functools.partial`` and
callbacks), the subject runs once traced by the default tracer (the logs DISTEA answers from)
and once more with per-call digests (settrace, the function-level ground truth). Every mutant
(:mod:`mutate`: operators over every helper function, parameters, input files, templates)
is applied to a copy and really re-run; a job is impacted if one of its outputs or one of its
(function, job) digests differs from the base run. Tools compared: DISTEA, static DAG
descendants of the rules whose code can reach the change, Snakemake's own detection (a dry
run after the change), MCov (every job that ran).

Quick mode (CI): per subject one base run (default tracer; output-level ground truth) and
two mutants, chosen as the subject's characteristic blind spots (a dispatch-table function,
a Snakefile-level helper, a decorator-registered function) plus one parameter, file or
template mutant.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
# This checkout's code first (the import roots of plugins/<distribution>/).
PLUGIN_ROOTS = [str(p.parent) for p in sorted((ROOT / "plugins").glob("*/pyproject.toml"))]
sys.path[:0] = PLUGIN_ROOTS

from distea import Change, build_order, impact, read_logs  # noqa: E402
from distea._baselines import dag_descendants  # noqa: E402
from distea._static import load_workflow  # noqa: E402

from .mutate import (  # noqa: E402
    Mutant,
    config_mutants,
    file_mutants,
    function_mutants,
    param_mutants,
)

LEVELS = ("job", "output")


@dataclass
class Subject:
    name: str
    executor: str
    helpers: list[str]
    templates: dict[str, str] = field(default_factory=dict)
    quick: list[str] = field(default_factory=list)
    """Name prefixes of the mutants the quick mode runs."""

    @property
    def source(self) -> Path:
        return HERE / "subjects" / self.name


SUBJECTS = [
    Subject(
        "sensorqc",
        "sticky",
        ["qclib/signal.py", "qclib/features.py", "qclib/model.py", "sticky_templates.py"],
        {"sticky_templates.py": "detector"},
        ["arith qclib.features.f_range", "param report.decimals"],
    ),
    Subject(
        "snakehelpers",
        "local",
        ["wfconf.py", "calc/numbers.py"],
        quick=["const wfconf.clip_for", "file data/x2.txt"],
    ),
    Subject(
        "dispatch",
        "local",
        ["ops/registry.py", "ops/hooks.py"],
        quick=["const ops.registry.double", "const ops.hooks.halve"],
    ),
    # Written by an independent helper from docs/distea.md alone (issue 28): a checkpoint's
    # directory, a fork Pool, a spawn process pool, a thread pool, `python -m` in shell:, a
    # run: block, nested config keys, a sticky template with a closure memo.
    Subject(
        "shardtext",
        "sticky",
        [
            "textkit/corpus.py",
            "textkit/normalize.py",
            "textkit/features.py",
            "textkit/model.py",
            "textkit/metrics.py",
            "textkit/tokstat.py",
            "sticky_templates.py",
        ],
        {"sticky_templates.py": "lexicon"},
        ["const textkit.corpus.plan_shards", "config shards.size"],
    ),  # fmt: skip
    # A dataclass-style tabular ETL (issue 28): a configfile with nested keys read by input
    # functions and scripts, a directory() output listed by glob and os.scandir, a shell pipe
    # between two `python -m` programs, subprocess.run, fork and forkserver process pools.
    Subject(
        "tabletl",
        "local",
        ["etl/schema.py", "etl/steps.py", "etl/stats.py", "etl/cli.py"],
        quick=["cmp etl.stats.bucket_of", "cmp etl.cli.emit"],
    ),
]


def mutants_of(subject: Subject) -> list[Mutant]:
    root = subject.source
    return (
        function_mutants(root, subject.helpers, subject.templates)
        + param_mutants(root)
        + file_mutants(root)
        + config_mutants(root)
    )


def _env(workdir: Path, traces: Path, digests: bool) -> dict[str, str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([*PLUGIN_ROOTS, str(workdir)]),
        "DISTEA_TRACE": str(traces),
        "PYTHONHASHSEED": "0",
    }
    env.pop("DISTEA_DIGESTS", None)
    env.pop("DISTEA_TRACE_MODE", None)
    if digests:
        env["DISTEA_DIGESTS"] = "1"
    return env


def _config(config: dict[str, Any]) -> list[str]:
    return ["--config", *(f"{k}={v}" for k, v in config.items())] if config else []


def run(subject: Subject, workdir: Path, config: dict[str, Any], digests: bool) -> Optional[str]:
    """Run the subject traced into ``workdir/traces``; the failure's tail, or None."""
    traces = workdir / "traces"
    shutil.rmtree(traces, ignore_errors=True)
    cmd = [
        sys.executable, "-m", "snakemake", "--executor", subject.executor, "-j", "1",
        "--forceall", "--nocolor", "--logger", "distea", "--logger-distea-dir", str(traces),
        *_config(config),
    ]  # fmt: skip
    proc = subprocess.run(
        cmd, cwd=workdir, env=_env(workdir, traces, digests), capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip
    return None if proc.returncode == 0 else (proc.stdout + proc.stderr)[-2000:]


def snakemake_detects(workdir: Path, config: dict[str, Any]) -> set[str]:
    """Outputs Snakemake itself would re-create after the change (dry run, every trigger)."""
    cmd = [sys.executable, "-m", "snakemake", "-n", "--nocolor", *_config(config)]
    env = _env(workdir, workdir / "unused", False)
    env.pop("DISTEA_TRACE")
    proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True)
    outputs: set[str] = set()
    for line in (proc.stdout + proc.stderr).splitlines():
        if line.startswith("    output: "):
            outputs |= {p.strip() for p in line.split(":", 1)[1].split(",")}
    return outputs


@dataclass
class Observed:
    outputs: dict[str, Optional[str]]
    producer: dict[str, str]
    digests: dict[tuple[str, str], tuple[int, str]]


def observe(traces: Path) -> Observed:
    trace = read_logs(traces)
    outputs: dict[str, Optional[str]] = {}
    producer: dict[str, str] = {}
    for key, job in trace.jobs.items():
        for path, digest in job.outputs:
            outputs[path] = digest
            producer[path] = key
    digests = {
        (f, job): (n, h) for p in trace.processes.values() for f, job, n, h in p.digests if job
    }
    return Observed(outputs, producer, digests)


def truth(base: Observed, mutant: Observed) -> dict[str, set[str]]:
    """Jobs and outputs of the base run that really changed (descriptive ground truth)."""
    outputs = {p for p in base.outputs if base.outputs[p] != mutant.outputs.get(p)}
    jobs = {base.producer[p] for p in outputs}
    if base.digests and mutant.digests:
        changed = {
            k for k in base.digests.keys() | mutant.digests.keys()
            if base.digests.get(k) != mutant.digests.get(k)
        }  # fmt: skip
        jobs |= {job for _, job in changed if job in set(base.producer.values())}
    outputs |= {p for p, k in base.producer.items() if k in jobs}
    return {"job": jobs, "output": outputs}


def static_seeds(subject: Subject, workdir: Path, change: Change, trace: Any) -> set[str]:
    """The static answer's seeds: jobs of the rules whose code can reach the change."""
    wf = load_workflow(workdir)
    assert wf is not None
    jobs = {k: j for k, j in trace.jobs.items() if j.outputs}
    if change.kind == "file":
        return {k for k, j in jobs.items() if any(p == change.name for p, _ in j.inputs)}
    if change.kind == "param":
        return {k for k, j in jobs.items() if j.rule == change.name.split(".", 1)[0]}
    if change.kind == "template":
        return {k for k, j in jobs.items() if wf.rules.get(j.rule) and wf.rules[j.rule].sticky}
    module = wf.module_of(change.name) or ""
    if any(module == m or module.startswith(m + ".") for m in wf.snakefile_modules):
        return set(jobs)
    return {k for k, j in jobs.items() if wf.rule_may_run(j.rule, module)}


def scores(pred: set[str], true: set[str]) -> dict[str, Any]:
    tp = len(pred & true)
    return {
        "precision": tp / len(pred) if pred else None,
        "recall": tp / len(true) if true else None,
        "predicted": len(pred),
        "true": len(true),
        "missed": sorted(true - pred),
    }


@dataclass
class _Prepared:
    subject: Subject
    work: Path
    base: Path
    base_obs: Observed
    trace: Any
    order: Any
    with_outputs: set[str]
    base_seconds: float
    mutants: list[Mutant]
    rows: list[dict] = field(default_factory=list)


def _prepare(subject: Subject, work: Path, quick: bool, digests: bool) -> _Prepared:
    work.mkdir(parents=True, exist_ok=True)
    base = work / "base"
    shutil.rmtree(base, ignore_errors=True)
    shutil.copytree(subject.source, base)
    started = time.perf_counter()
    failure = run(subject, base, {}, digests=False)
    if failure:
        raise RuntimeError(f"{subject.name}: base run failed:\n{failure}")
    base_seconds = time.perf_counter() - started
    truth_dir = base
    if digests:  # per-call digests (settrace): jobs whose functions computed differently
        truth_dir = work / "truth"
        shutil.rmtree(truth_dir, ignore_errors=True)
        shutil.copytree(subject.source, truth_dir)
        if run(subject, truth_dir, {}, digests=True):
            raise RuntimeError(f"{subject.name}: digest run failed")
    trace = read_logs(base / "traces")
    mutants = mutants_of(subject)
    if quick:
        mutants = [m for m in mutants if any(m.name.startswith(q) for q in subject.quick)]
    return _Prepared(
        subject, work, truth_dir, observe(truth_dir / "traces"), trace, build_order(trace),
        {k for k, j in trace.jobs.items() if j.outputs}, base_seconds, mutants,
    )  # fmt: skip


def _one(prep: _Prepared, index: int, quick: bool, digests: bool, log: Any) -> dict:
    subject, trace, mutant = prep.subject, prep.trace, prep.mutants[index]
    mdir = prep.work / f"m{index:02d}"
    shutil.rmtree(mdir, ignore_errors=True)
    shutil.copytree(prep.base, mdir, ignore=shutil.ignore_patterns("traces"))
    mutant.apply(mdir)
    stamp = time.time() + 1
    for name, *_ in mutant.edits:  # a later mtime, as an editor would leave it
        os.utime(mdir / name, (stamp, stamp))
    listed = set() if quick else snakemake_detects(mdir, mutant.config)
    failure = run(subject, mdir, mutant.config, digests=digests)
    row: dict[str, Any] = {"mutant": mutant.name, "kind": mutant.kind, "changes": mutant.changes}
    if failure:
        shutil.rmtree(mdir, ignore_errors=True)
        log(f"  {subject.name} {mutant.name[:60]:<60} crashed (excluded)")
        return {**row, "crashed": True}
    gt = truth(prep.base_obs, observe(mdir / "traces"))
    shutil.rmtree(mdir, ignore_errors=True)
    changes = [Change.parse(c) for c in mutant.changes]
    ours = impact(prep.order, changes, explain=False)
    producers = {p: k for k, j in trace.jobs.items() for p, _ in j.outputs}
    seeds = set().union(*(static_seeds(subject, prep.base, c, trace) for c in changes))
    jobs = {
        "distea": {i.name for i in ours.jobs},
        "static_dag": dag_descendants(trace, seeds) & prep.with_outputs,
        "mcov": set(prep.with_outputs),
    }
    if not quick:
        jobs["snakemake"] = {producers[p] for p in listed if p in producers}
    row["truth"] = {level: sorted(gt[level]) for level in LEVELS}  # for rescore()
    row["warnings"] = len(ours.warnings)
    row["warning_text"] = ours.warnings[:3]
    row["inert"] = not gt["job"]
    row["tools"] = {}
    for tool, predicted in jobs.items():
        outputs = {p for k in predicted for p, _ in trace.jobs[k].outputs}
        row["tools"][tool] = {
            "job": scores(predicted, gt["job"]),
            "output": scores(outputs, gt["output"]),
        }
    d = row["tools"]["distea"]["job"]
    log(
        f"  {subject.name} {mutant.name[:60]:<60} true {d['true']:2d} distea "
        f"{d['predicted']:2d} R={_fmt(d['recall'])} P={_fmt(d['precision'])} "
        f"warnings {row['warnings']}"
    )
    return row


def rescore(result: dict[str, Any], work: Path) -> int:
    """DISTEA's answers again, from each subject's base logs under ``work``, against the
    ground truth the rows stored (after a change to the analysis only: no workflow re-runs).
    Rows without a stored truth are kept unless their truth is known (nothing predicted:
    the missed jobs are the truth). Returns the number of rows re-scored."""
    done = 0
    for subject in result["subjects"]:
        traces = work / subject["subject"] / "base" / "traces"
        if not traces.is_dir():
            continue
        trace = read_logs(traces)
        order = build_order(trace)
        for row in subject["per_mutant"]:
            if row.get("crashed"):
                continue
            truth = row.get("truth")
            cell = row["tools"]["distea"]["job"]
            if truth is None and cell["predicted"] == 0:
                jobs = set(cell["missed"])
                truth = {"job": sorted(jobs), "output": sorted(
                    p for k in jobs if k in trace.jobs for p, _ in trace.jobs[k].outputs
                )}  # fmt: skip
            if truth is None:
                continue
            ours = impact(order, [Change.parse(c) for c in row["changes"]], explain=False)
            predicted = {i.name for i in ours.jobs}
            outputs = {p for k in predicted for p, _ in trace.jobs[k].outputs}
            row["tools"]["distea"] = {
                "job": scores(predicted, set(truth["job"])),
                "output": scores(outputs, set(truth["output"])),
            }
            row["warnings"] = len(ours.warnings)
            row["warning_text"] = ours.warnings[:3]
            row["rescored"] = True
            done += 1
        subject["summary"] = summarise([r for r in subject["per_mutant"]])
    return done


def _report(prep: _Prepared) -> dict[str, Any]:
    rows = prep.rows
    return {
        "subject": prep.subject.name,
        "executor": prep.subject.executor,
        "jobs": len(prep.with_outputs),
        "base_run_seconds": round(prep.base_seconds, 2),
        "mutants_generated": len(prep.mutants),
        "mutants_run": len(rows),
        "crashed": sum(1 for r in rows if r.get("crashed")),
        "inert": sum(1 for r in rows if r.get("inert")),
        "summary": summarise(rows),
        "per_mutant": rows,
    }


def _mean(values: list[Optional[float]]) -> Optional[float]:
    kept = [v for v in values if v is not None]
    return round(statistics.fmean(kept), 3) if kept else None


def _fmt(value: Optional[float]) -> str:
    return " - " if value is None else f"{value:.2f}"


def summarise(rows: list[dict]) -> dict[str, Any]:
    live = [r for r in rows if not r.get("crashed")]
    if not live:
        return {}
    summary: dict[str, Any] = {}
    for tool in live[0]["tools"]:
        summary[tool] = {}
        for level in LEVELS:
            cells = [r["tools"][tool][level] for r in live if r["tools"][tool][level]["true"]]
            summary[tool][level] = {
                "recall": _mean([c["recall"] for c in cells]),
                "min_recall": min((c["recall"] for c in cells), default=None),
                "precision": _mean([c["precision"] or 0.0 for c in cells]),
                "mutants": len(cells),
            }
        summary[tool]["jobs_flagged_on_inert_mutants"] = sum(
            r["tools"][tool]["job"]["predicted"] for r in live if r["inert"]
        )
    summary["distea"]["warnings_per_query"] = _mean([float(r["warnings"]) for r in live])
    summary["distea"]["queries_with_warnings"] = sum(1 for r in live if r["warnings"])
    return summary


def evaluate(
    quick: bool,
    work: Path,
    names: Optional[list[str]] = None,
    log: Any = print,
    digests: bool = False,
    partial: Optional[Any] = None,
    deadline: Optional[float] = None,
) -> dict[str, Any]:
    """Every subject (or those named); the figures for ``bench/results/distea.json``.

    Mutants run round-robin over the subjects; ``partial(result)`` is called after each one
    (so an interrupted run keeps its figures) and no mutant starts after ``deadline``
    (``time.time()``), the rest counted as not run.
    """
    preps = []
    for subject in SUBJECTS:
        if names and subject.name not in names:
            continue
        log(f"subject {subject.name} ({subject.executor} executor)")
        preps.append(_prepare(subject, work / subject.name, quick, digests))
    started = time.perf_counter()
    rounds = max(len(p.mutants) for p in preps)
    for index in range(rounds):
        for prep in preps:
            if index >= len(prep.mutants):
                continue
            if deadline is not None and time.time() > deadline:
                break
            prep.rows.append(_one(prep, index, quick, digests, log))
            if partial is not None:
                partial(_result(quick, preps, digests, started))
    return _result(quick, preps, digests, started)


def _result(quick: bool, preps: list[_Prepared], digests: bool, started: float) -> dict:
    return {
        "quick": quick,
        "ground_truth": "outputs and per-call digests" if digests else "job outputs",
        "seconds": round(time.perf_counter() - started, 1),
        "subjects": [_report(p) for p in preps],
    }


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description="DISTEA on generated mutants")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--subject", action="append")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--digests", action="store_true", help="function digests in the truth")
    args = parser.parse_args()
    work = ROOT / "bench" / "work" / "distea_eval"
    result = evaluate(args.quick, work, args.subject, digests=args.digests)
    text = json.dumps(result, indent=1)
    if args.out:
        args.out.write_text(text)
    for s in result["subjects"]:
        d = s["summary"].get("distea", {})
        print(s["subject"], {lvl: d.get(lvl) for lvl in LEVELS})


if __name__ == "__main__":
    main()
