"""DISTEA benchmark: impact precision/recall against re-run ground truth, tracer overhead, scale.

``python bench/distea.py [--quick]`` prints the figures and writes ``bench/results/distea.json``.

1. **Accuracy.** The subject workflow (``bench/distea_subject``: scripts importing a shared
   package, a sticky worker whose state is built by a helper module and carried across jobs,
   branches taken only by some samples) runs traced, twice (the second run is the noise floor).
   Each mutant (function bodies, a template, parameters, input files) is applied to a copy
   and *really re-run*; the ground truth is the set of (function, job) call digests, job
   outputs and files that differ from the base run (execution differencing, MDEA-lite).
   Predictions come from the *base* logs only. Tools: DISTEA (this package); static DAG
   descendants of the rules whose code imports the change; Snakemake's own
   dry run (all rerun triggers: what it would re-run after the change); DistIA's Lamport rule; MCov
   (everything that ran). Precision, recall, F1 at function, job and output level.
2. **Tracer overhead** on a compute-heavy script, traced vs untraced, alternated, median ratio.
3. **Scale**: analysis of a synthetic trace of 1 million events (100k with ``--quick``): parse,
   order and three queries, in a fresh process; events/s and peak RSS.
"""

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import PLUGIN_ROOTS, RESULTS, ROOT, WORK, write_result  # noqa: E402

sys.path[:0] = PLUGIN_ROOTS  # this checkout's code first

from distea import Change, build_order, impact, read_logs  # noqa: E402
from distea._baselines import dag_descendants, import_closure, lamport_impact  # noqa: E402

SUBJECT = ROOT / "bench" / "distea_subject"
HERE = WORK / "distea"
ALL_SAMPLES = ["S1", "S2", "S3", "S4", "S5", "S6", "S7", "S8"]


@dataclass
class Mutant:
    name: str
    changes: list[str]
    edits: list[tuple[str, str, str]] = field(default_factory=list)
    """(file, old text, new text); the old text must occur exactly once."""
    config: dict[str, Any] = field(default_factory=dict)


MUTANTS = [
    Mutant(
        "strip_digits drops digits without a space",
        ["func:wflib.text.strip_digits"],
        [("wflib/text.py", 'r"[0-9]+", " "', 'r"[0-9]+", ""')],
    ),
    Mutant(
        "shorten keeps 30 tokens (long documents only)",
        ["func:wflib.text.shorten"],
        [("wflib/text.py", "tokens[:40]", "tokens[:30]")],
    ),
    Mutant(
        "tokenize needs two letters",
        ["func:wflib.text.tokenize"],
        [("wflib/text.py", 'r"[a-z]+"', 'r"[a-z]{2,}"')],
    ),
    Mutant(
        "normalize shortens above 50 tokens",
        ["func:wflib.text.normalize"],
        [("wflib/text.py", "len(tokens) > 40", "len(tokens) > 50")],
    ),
    Mutant(
        "normalize keeps stop words",
        ["func:wflib.text.normalize"],
        [("wflib/text.py", "and t not in STOP]", "]")],
    ),
    Mutant(
        "rare_vector halves less",
        ["func:wflib.model.rare_vector"],
        [("wflib/model.py", "v * 0.5", "v * 0.25")],
    ),
    Mutant(
        "token_vector scales by 256",
        ["func:wflib.model.token_vector"],
        [("wflib/model.py", "digest[i] / 255.0", "digest[i] / 256.0")],
    ),
    Mutant(
        "build_vocab drops its last word",
        ["func:wflib.model.build_vocab"],
        [("wflib/model.py", "enumerate(sorted(SEED_WORDS))", "enumerate(sorted(SEED_WORDS)[:-1])")],
    ),
    Mutant(
        "embed rounds to 5 digits",
        ["func:wflib.model.Model.embed"],
        [("wflib/model.py", "round(v / n, 6)", "round(v / n, 5)")],
    ),
    Mutant(
        "lookup treats short words as rare",
        ["func:wflib.model.Model.lookup"],
        [
            (
                "wflib/model.py",
                "if token in self.vocab:",
                "if token in self.vocab and len(token) > 4:",
            )
        ],
    ),
    Mutant(
        "apply_boost adds 0.1 (high scores only)",
        ["func:wflib.scoring.apply_boost"],
        [("wflib/scoring.py", "return value * boost", "return value * boost + 0.1")],
    ),
    Mutant(
        "label uses >= (refactor, nearly equivalent)",
        ["func:wflib.scoring.label"],
        [("wflib/scoring.py", '"high" if value > threshold', '"high" if value >= threshold')],
    ),
    Mutant(
        "score divides by n + 1",
        ["func:wflib.scoring.score"],
        [("wflib/scoring.py", "sum(vector) / len(vector)", "sum(vector) / (len(vector) + 1)")],
    ),
    Mutant(
        "merge sorts in reverse",
        ["func:scripts.aggregate.merge"],
        [
            (
                "scripts/aggregate.py",
                '"".join(sorted(lines))',
                '"".join(sorted(lines, reverse=True))',
            )
        ],
    ),
    Mutant(
        "prepare script writes indented JSON",
        ["func:scripts.prepare.<module>"],
        [
            (
                "scripts/prepare.py",
                'json.dump({"tokens": tokens}, f)',
                'json.dump({"tokens": tokens}, f, indent=1)',
            )
        ],
    ),
    Mutant(
        "template adds a word to the vocabulary",
        ["template:model"],
        [("sticky_templates.py", "model.build_vocab()", '{**model.build_vocab(), "zebra": 99}')],
    ),
    Mutant(
        "template uses 6 dimensions",
        ["template:model"],
        [("sticky_templates.py", "dims=int(model.DIMS)", "dims=6")],
    ),
    Mutant("threshold 0.5 -> 0.45", ["param:score.threshold"], config={"threshold": 0.45}),
    Mutant("boost 2.0 -> 3.0", ["param:score.boost"], config={"boost": 3.0}),
    Mutant(
        "min_len 2 -> 4",
        ["param:prepare.min_len"],
        [("Snakefile", "min_len=2,", "min_len=4,")],
    ),
    Mutant(
        "S1 gets another word",
        ["file:data/S1.txt"],
        [("data/S1.txt", "graph", "graph science")],
    ),
    Mutant(
        "S4 rewritten",
        ["file:data/S4.txt"],
        [("data/S4.txt", "science of the model graph", "order of the message process")],
    ),
    Mutant(
        "S5 gets trailing spaces (no effect after normalisation)",
        ["file:data/S5.txt"],
        [("data/S5.txt", "bananas", "bananas   ")],
    ),
]
QUICK_MUTANTS = [5, 17]


# ------------------------------------------------------------------------------------------
# Running the subject


def _env(workdir: Path, traces: Path, digests: bool) -> dict[str, str]:
    paths = [*PLUGIN_ROOTS, str(workdir)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths), "DISTEA_TRACE": str(traces)}
    env["PYTHONHASHSEED"] = "0"
    if digests:
        env["DISTEA_DIGESTS"] = "1"
    return env


def _config_args(samples: list[str], config: dict[str, Any]) -> list[str]:
    args = ["samples=" + json.dumps(samples)]
    args += [f"{k}={v}" for k, v in config.items()]
    return ["--config", *args]


def run_subject(
    workdir: Path, traces: Path, samples: list[str], config: dict[str, Any], digests: bool = True
) -> float:
    shutil.rmtree(traces, ignore_errors=True)
    cmd = [
        sys.executable, "-m", "snakemake", "--executor", "sticky", "-j", "1", "--forceall",
        "--scheduler", "greedy", "--logger", "distea", "--logger-distea-dir", str(traces),
        "--nocolor", *_config_args(samples, config),
    ]  # fmt: skip
    start = time.perf_counter()
    proc = subprocess.run(
        cmd, cwd=workdir, env=_env(workdir, traces, digests), capture_output=True, text=True
    )
    if proc.returncode != 0:
        sys.exit(f"subject run failed in {workdir}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return time.perf_counter() - start


def snakemake_reruns(workdir: Path, samples: list[str], config: dict[str, Any]) -> set[str]:
    """Outputs Snakemake itself would re-create after the change (dry run, all rerun triggers:
    mtime, params, input, software-env, code), descendants included.

    ``--list-changes params`` is not usable here: in Snakemake 9.27 it prints every output
    even when nothing changed (``ParamsChange`` always carries its file); the dry run applies
    the same per-output checks and adds what the mtime and code triggers see.
    """
    cmd = [
        sys.executable, "-m", "snakemake", "-n", "--nocolor", *_config_args(samples, config),
    ]  # fmt: skip
    proc = subprocess.run(
        cmd, cwd=workdir, env=_env(workdir, workdir / "unused", False), capture_output=True,
        text=True,
    )  # fmt: skip
    outputs: set[str] = set()
    for line in (proc.stdout + proc.stderr).splitlines():
        if line.startswith("    output: "):
            outputs |= {p.strip() for p in line.split(":", 1)[1].split(",")}
    return outputs


def _apply(workdir: Path, mutant: Mutant) -> None:
    for name, old, new in mutant.edits:
        path = workdir / name
        text = path.read_text()
        if text.count(old) != 1:
            sys.exit(f"mutant {mutant.name!r}: {old!r} occurs {text.count(old)} times in {name}")
        path.write_text(text.replace(old, new))
        # A later mtime, as an editor would leave it (Snakemake's mtime triggers see it).
        stamp = time.time() + 1
        os.utime(path, (stamp, stamp))


# ------------------------------------------------------------------------------------------
# Ground truth and predictions


@dataclass
class Observed:
    digests: dict[tuple[str, str], tuple[int, str]]
    outputs: dict[str, Optional[str]]
    jobs: set[str]
    producer: dict[str, str]


def observe(traces: Path) -> Observed:
    trace = read_logs(traces)
    digests = {
        (f, job): (n, h) for p in trace.processes.values() for f, job, n, h in p.digests if job
    }
    outputs: dict[str, Optional[str]] = {}
    producer: dict[str, str] = {}
    jobs = {k for k, j in trace.jobs.items() if j.outputs}
    for key in jobs:
        for path, digest in trace.jobs[key].outputs:
            outputs[path] = digest
            producer[path] = key
    return Observed(digests, outputs, jobs, producer)


def differences(a: Observed, b: Observed) -> dict[str, set]:
    functions = {
        k for k in a.digests.keys() | b.digests.keys() if a.digests.get(k) != b.digests.get(k)
    }
    outputs = {
        p for p in a.outputs.keys() | b.outputs.keys() if a.outputs.get(p) != b.outputs.get(p)
    }
    return {"function": functions, "output": outputs}


def truth(base: Observed, mutant: Observed, noise: dict[str, set]) -> dict[str, dict[str, set]]:
    diff = differences(base, mutant)
    functions = diff["function"] - noise["function"]
    outputs = diff["output"] - noise["output"]
    jobs = {base.producer.get(p) or mutant.producer.get(p) for p in outputs}
    jobs |= {ctx for _, ctx in functions if ctx in base.jobs | mutant.jobs}
    jobs.discard(None)
    predictive = {"function": functions, "job": jobs, "output": outputs}
    ran = set(base.digests)
    descriptive = {
        "function": functions & ran,
        "job": jobs & base.jobs,
        "output": outputs & set(base.outputs),
    }
    return {"descriptive": descriptive, "predictive": predictive}


@dataclass
class Rule:
    name: str
    script: Optional[str]
    sticky: Optional[str]


def parse_rules(snakefile: Path) -> dict[str, Rule]:
    """Rule -> script and sticky template, read from the subject's Snakefile (static view)."""
    rules: dict[str, Rule] = {}
    for block in re.split(r"\nrule ", snakefile.read_text())[1:]:
        name = block.split(":", 1)[0].strip()
        script = re.search(r'script:\s*\n\s*"([^"]+)"', block)
        sticky = re.search(r'sticky="([^"]+)"', block)
        rules[name] = Rule(name, script and script.group(1), sticky and sticky.group(1))
    return rules


def static_seeds(workdir: Path, change: Change, trace: Any, rules: dict[str, Rule]) -> set[str]:
    """Jobs whose rule's code (script, template file, imports) could contain the change."""
    chosen: set[str] = set()
    if change.kind == "func":
        for rule in rules.values():
            modules: set[str] = set()
            files = [rule.script] if rule.script else []
            if rule.sticky:
                files.append("sticky_templates.py")
            for file in files:
                modules.add(file[:-3].replace("/", "."))
                modules |= import_closure(workdir / file, workdir)
            if any(change.name == m or change.name.startswith(m + ".") for m in modules):
                chosen.add(rule.name)
    elif change.kind == "template":
        chosen = {r.name for r in rules.values() if r.sticky == change.name}
    elif change.kind in ("param", "rule"):
        chosen = {change.name.split(".", 1)[0]}
    if change.kind == "file":
        return {k for k, j in trace.jobs.items() if any(p == change.name for p, _ in j.inputs)}
    return {k for k, j in trace.jobs.items() if j.rule in chosen}


def predictions(
    workdir: Path,
    traces: Path,
    mutant: Mutant,
    snakemake_listed: set[str],
    rules: dict[str, Rule],
    only_ours: bool = False,
) -> tuple[dict[str, dict[str, set]], set[str]]:
    """Each tool's (function, job, output) predictions from one base trace, and the function
    names that trace could see (function-level ground truth is restricted to them)."""
    trace = read_logs(traces)
    order = build_order(trace)
    changes = [Change.parse(c) for c in mutant.changes]
    with_outputs = {k for k, j in trace.jobs.items() if j.outputs}
    ran = {
        (trace.functions[int(f)], ctx)
        for p in trace.processes.values()
        for f, ctx in _contexts_of(p)
        if ctx in with_outputs
    }

    def close(jobs: set[str], functions: Optional[set] = None) -> dict[str, set]:
        jobs = jobs & with_outputs
        outputs = {p for k in jobs for p, _ in trace.jobs[k].outputs}
        if functions is None:
            functions = {(f, ctx) for f, ctx in ran if ctx in jobs}
        return {"function": functions & ran, "job": jobs, "output": outputs}

    ours = impact(order, changes, explain=False)
    tools = {
        "distea": close({i.name for i in ours.jobs}, ours.names("function")),
    }
    seeds: set[str] = set()
    for change in changes:
        seeds |= static_seeds(workdir, change, trace, rules)
    tools["static_dag"] = close(dag_descendants(trace, seeds))
    producers = {p: k for k, j in trace.jobs.items() for p, _ in j.outputs}
    listed = {producers[p] for p in snakemake_listed if p in producers}
    tools["snakemake_dryrun"] = close(dag_descendants(trace, listed))
    lam_functions, lam_jobs = lamport_impact(order, changes)
    tools["distea_lamport"] = close(lam_jobs, lam_functions)
    tools["mcov"] = close(set(with_outputs))
    return tools, set(trace.functions)


def _contexts_of(proc: Any) -> list[tuple[int, str]]:
    from distea._query import _contexts

    starts, keys = _contexts(proc)
    out = []
    for fid, first in zip(proc.fn_ids, proc.fn_first, strict=True):
        context = proc.job or proc.name
        if len(starts):
            k = int((starts <= first).sum()) - 1
            context = keys[k] if k >= 0 else proc.name
        out.append((fid, context))
    return out


def scores(pred: set, true: set) -> dict[str, Optional[float]]:
    tp = len(pred & true)
    precision = tp / len(pred) if pred else None
    recall = tp / len(true) if true else None
    if precision is None or recall is None:
        f1 = 0.0 if true else None
    else:
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "predicted": len(pred),
        "true": len(true),
        "tp": tp,
    }


def _mean(values: list[Optional[float]]) -> Optional[float]:
    kept = [v for v in values if v is not None]
    return round(statistics.fmean(kept), 3) if kept else None


def accuracy(quick: bool) -> dict[str, Any]:
    samples = ALL_SAMPLES[:4] if quick else ALL_SAMPLES
    mutants = [MUTANTS[i] for i in QUICK_MUTANTS] if quick else MUTANTS
    base = HERE / "base"
    shutil.rmtree(HERE, ignore_errors=True)
    HERE.mkdir(parents=True)
    shutil.copytree(SUBJECT, base)
    seconds = [run_subject(base, base / "traces", samples, {})]
    noise_dir = HERE / "noise"
    shutil.copytree(SUBJECT, noise_dir)
    seconds.append(run_subject(noise_dir, noise_dir / "traces", samples, {}))
    # The predictions of the default tracer (instrument on 3.11) come from a run without digests.
    pred = HERE / "pred"
    shutil.copytree(SUBJECT, pred)
    seconds.append(run_subject(pred, pred / "traces", samples, {}, digests=False))
    base_obs = observe(base / "traces")
    noise = differences(base_obs, observe(noise_dir / "traces"))
    print(f"base run: {seconds[0]:.1f} s; noise floor: {len(noise['function'])} function digests, "
          f"{len(noise['output'])} outputs differ between two base runs")  # fmt: skip
    rules = parse_rules(base / "Snakefile")
    rows = []
    for index, mutant in enumerate(mutants):
        mdir = HERE / f"m{index:02d}"
        shutil.copytree(base, mdir, ignore=shutil.ignore_patterns("traces"))
        _apply(mdir, mutant)
        listed = snakemake_reruns(mdir, samples, mutant.config)
        run_subject(mdir, mdir / "traces", samples, mutant.config)
        gt = truth(base_obs, observe(mdir / "traces"), noise)
        full, full_names = predictions(base, base / "traces", mutant, listed, rules)
        default, default_names = predictions(
            pred, pred / "traces", mutant, listed, rules, only_ours=True
        )
        tools = {"distea": default["distea"], "distea_settrace": full.pop("distea"), **full}
        row: dict[str, Any] = {"mutant": mutant.name, "changes": mutant.changes, "tools": {}}
        for tool, predicted in tools.items():
            names = default_names if tool == "distea" else full_names
            row["tools"][tool] = {}
            for level in ("function", "job", "output"):
                true = gt["descriptive"][level]
                every = gt["predictive"][level]
                if level == "function":
                    true = {(f, c) for f, c in true if f in names}
                    every = {(f, c) for f, c in every if f in names}
                row["tools"][tool][level] = {
                    **scores(predicted[level], true),
                    "predictive_recall": scores(predicted[level], every)["recall"],
                }
        missed = {
            level: sorted(map(str, gt["descriptive"][level] - tools["distea_settrace"][level]))
            for level in ("function", "job", "output")
        }
        row["distea_missed"] = {k: v for k, v in missed.items() if v}
        row["inert"] = not any(gt["descriptive"][lvl] for lvl in ("function", "job", "output"))
        rows.append(row)
        d = row["tools"]["distea"]
        print(
            f"  {index:2d} {mutant.name[:44]:<44} true jobs {d['job']['true']:2d}  "
            + "  ".join(
                f"{tool[:10]} P={_fmt(t['job']['precision'])} R={_fmt(t['job']['recall'])}"
                for tool, t in row["tools"].items()
            )
        )
        shutil.rmtree(mdir)
    summary: dict[str, Any] = {}
    for tool in rows[0]["tools"]:
        summary[tool] = {}
        for level in ("function", "job", "output"):
            live = [r for r in rows if r["tools"][tool][level]["true"] > 0]
            cells = [r["tools"][tool][level] for r in live]
            summary[tool][level] = {
                "precision": _mean([c["precision"] for c in cells]),
                # An empty answer to a change that did impact something counts as 0 here.
                "precision_empty_as_0": _mean([c["precision"] or 0.0 for c in cells]),
                "recall": _mean([c["recall"] for c in cells]),
                "f1": _mean([c["f1"] for c in cells]),
                "predictive_recall": _mean([c["predictive_recall"] for c in cells]),
                "mutants": len(live),
                "empty_predictions": sum(1 for c in cells if c["predicted"] == 0),
            }
        inert = [r for r in rows if r["inert"]]
        summary[tool]["false_positive_jobs_on_inert_mutants"] = sum(
            r["tools"][tool]["job"]["predicted"] for r in inert
        )
    return {
        "samples": samples,
        "mutants": len(mutants),
        "inert_mutants": sum(1 for r in rows if r["inert"]),
        "noise_floor": {k: len(v) for k, v in noise.items()},
        "subject_run_seconds": {"digests": round(seconds[0], 2), "default": round(seconds[2], 2)},
        "summary": summary,
        "per_mutant": rows,
    }


def _fmt(value: Optional[float]) -> str:
    return "  - " if value is None else f"{value:.2f}"


# ------------------------------------------------------------------------------------------
# Tracer overhead

HEAVY_HELPER = """
def escape(re0, im0, limit):
    re, im = 0.0, 0.0
    for n in range(limit):
        re, im = re * re - im * im + re0, 2 * re * im + im0
        if re * re + im * im > 4.0:
            return n
    return limit


def row(y, width, height, limit):
    return [escape(-2.0 + 3.0 * x / width, -1.2 + 2.4 * y / height, limit) for x in range(width)]
"""
HEAVY_MAIN = """
import distea.autotrace  # noqa: F401
import sys
import heavy_helper

size = int(sys.argv[1])
total = sum(sum(heavy_helper.row(y, size, size, 200)) for y in range(size))
print(total)
"""


def overhead(quick: bool) -> dict[str, Any]:
    folder = HERE / "overhead"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    (folder / "heavy_helper.py").write_text(HEAVY_HELPER)
    (folder / "heavy.py").write_text(HEAVY_MAIN)
    size = "200" if quick else "400"
    reps = 2 if quick else 7
    py = f"{sys.version_info.major}.{sys.version_info.minor}"
    variants = {
        f"{py} instrument (default)": (sys.executable, "instrument"),
        f"{py} settrace": (sys.executable, "settrace"),
    }
    for candidate in sorted(Path.home().glob(".pyenv/versions/3.1[2-9]*/bin/python3")):
        probe = [str(candidate), "-c", "import sys; sys.monitoring"]
        if subprocess.run(probe, capture_output=True).returncode == 0:
            variants[f"{candidate.parent.parent.name} sys.monitoring"] = (str(candidate), "")
            break
    out: dict[str, Any] = {
        "workload": f"mandelbrot {size}x{size}, one traced call per pixel (~5 us of work each)",
        "measure": "median over interleaved runs of the child's CPU seconds (user+sys), which "
        "other load on a shared machine disturbs far less than wall time; wall medians too",
    }
    for label, (python, mode) in variants.items():
        cpu: dict[str, list[float]] = {"plain": [], "traced": []}
        wall: dict[str, list[float]] = {"plain": [], "traced": []}
        for rep in range(reps):
            for kind in ("plain", "traced") if rep % 2 == 0 else ("traced", "plain"):
                env = {**os.environ, "PYTHONPATH": os.pathsep.join(PLUGIN_ROOTS)}
                env.pop("DISTEA_TRACE", None)
                if kind == "traced":
                    env["DISTEA_TRACE"] = str(folder / "traces")
                    env["DISTEA_TRACE_MODE"] = mode
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                start = time.perf_counter()
                subprocess.run(
                    [python, "heavy.py", size], cwd=folder, env=env, check=True, capture_output=True
                )
                wall[kind].append(time.perf_counter() - start)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[kind].append(
                    after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
                )
        plain, traced = statistics.median(cpu["plain"]), statistics.median(cpu["traced"])
        wall_ratio = statistics.median(wall["traced"]) / statistics.median(wall["plain"])
        out[label] = {
            "plain_cpu_s": round(plain, 3),
            "traced_cpu_s": round(traced, 3),
            "ratio": round(traced / plain, 3),
            "wall_ratio": round(wall_ratio, 3),
        }
        print(
            f"tracer overhead ({label}): CPU {plain:.2f} s -> {traced:.2f} s = "
            f"{traced / plain:.3f}x (wall {wall_ratio:.3f}x)"
        )
    return out


# ------------------------------------------------------------------------------------------
# Scale: a synthetic trace


def synthesize(folder: Path, events: int) -> int:
    """Write a synthetic trace of about ``events`` records; return the exact count."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    per_sample = 2 * 63 + 73 + 6
    samples = max(10, events // per_sample)
    workers = 16
    names = [f"lib.mod{m}.fn{f}" for m in range(25) for f in range(20)]
    written = 0
    dumps = json.dumps
    jobs = []

    def job(rule: str, out: str, inputs: list[str]) -> dict[str, Any]:
        return {
            "k": "job",
            "rule": rule,
            "wildcards": {},
            "input": [[p, "h"] for p in inputs],
            "output": [[out, "h"]],
        }

    for s in range(samples):
        jobs.append(job("prep", f"p/{s}", [f"d/{s}"]))
        jobs.append(job("emb", f"e/{s}", [f"p/{s}"]))
        jobs.append(job("score", f"s/{s}", [f"e/{s}"]))
    jobs.append(job("agg", "report", [f"s/{s}" for s in range(samples)]))
    with open(folder / "snakemake.jsonl", "w") as f:
        f.write(
            dumps({"distea": 1, "k": "header", "source": "logger", "process": "snakemake"}) + "\n"
        )
        for i, j in enumerate(jobs):
            f.write(dumps({**j, "id": str(i)}) + "\n")
            f.write(dumps({"k": "done", "id": str(i), "output": j["output"]}) + "\n")
            written += 2
    for s in range(samples):
        for rule, out, inp in (("prep", f"p/{s}", f"d/{s}"), ("score", f"s/{s}", f"e/{s}")):
            lines = [
                dumps(
                    {
                        "distea": 1,
                        "k": "header",
                        "source": "tracer",
                        "process": f"{rule}{s}",
                        "role": "script",
                        "job": f"{rule}[{out}]",
                    }
                )
            ]
            lines.append(dumps({"k": "open", "p": inp, "c": 30}))
            for k in range(60):
                first = 1 + k if k < 20 else 31 + k
                lines.append(
                    dumps(
                        {
                            "k": "fn",
                            "f": names[(s * 7 + k) % len(names)],
                            "c": [first, first + 1 + k % 3],
                        }
                    )
                )
            lines.append(dumps({"k": "end", "c": 200}))
            (folder / f"{rule}{s}.jsonl").write_text("\n".join(lines) + "\n")
            written += len(lines) - 1
    for w in range(workers):
        lines = [
            dumps(
                {
                    "distea": 1,
                    "k": "header",
                    "source": "tracer",
                    "process": f"w{w}",
                    "role": "worker",
                }
            )
        ]
        clock = 0
        for s in range(w, samples, workers):
            key = f"emb[e/{s}]"
            clock += 1
            lines.append(dumps({"k": "recv", "m": f"i{s}", "c": clock, "job": key}))
            lines.append(dumps({"k": "open", "p": f"p/{s}", "c": clock + 1}))
            for k in range(70):
                lines.append(
                    dumps(
                        {
                            "k": "fn",
                            "f": names[(s + k * 3) % len(names)],
                            "c": [clock + 2 + k, clock + 3 + k],
                        }
                    )
                )
            clock += 80
            lines.append(dumps({"k": "send", "m": f"i{s}>done", "c": clock, "job": key}))
        lines.append(dumps({"k": "end", "c": clock + 1}))
        (folder / f"w{w}.jsonl").write_text("\n".join(lines) + "\n")
        written += len(lines) - 1
    return written


ANALYSE = """
import json, resource, sys, time
sys.path[:0] = {plugins!r}
from distea import Change, build_order, impact, read_logs
t0 = time.perf_counter()
trace = read_logs({folder!r})
t1 = time.perf_counter()
order = build_order(trace)
t2 = time.perf_counter()
sizes = []
for q in ["func:lib.mod3.fn7", "file:d/5", "func:lib.mod0"]:
    r = impact(order, [Change.parse(q)])
    sizes.append([r.count("function"), len(r.jobs)])
t3 = time.perf_counter()
rows = len(r.functions)  # materialise every (function, job) row of the last query, sorted
t4 = time.perf_counter()
print(json.dumps({{"events": trace.events, "parse_s": t1 - t0, "order_s": t2 - t1,
    "queries_s": t3 - t2, "rows": rows, "rows_s": t4 - t3,
    "nodes": order.graph.number_of_nodes(),
    "edges": order.graph.number_of_edges(), "impacted_functions_jobs": sizes,
    "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""


def scale(quick: bool) -> dict[str, Any]:
    target = 100_000 if quick else 1_000_000
    folder = HERE / "synthetic"
    written = synthesize(folder, target)
    size_mb = sum(p.stat().st_size for p in folder.iterdir()) / 2**20
    code = ANALYSE.format(plugins=PLUGIN_ROOTS, folder=str(folder))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    result = json.loads(proc.stdout)
    probe = (
        f"import sys; sys.path[:0] = {PLUGIN_ROOTS!r}; import resource, "
        "distea._order, distea._query; "
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)"
    )
    baseline = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    total = result["parse_s"] + result["order_s"] + result["queries_s"]
    result.update(
        written=written,
        log_mb=round(size_mb, 1),
        total_s=round(total, 3),
        events_per_s=round(result["events"] / total),
        import_rss_mb=round(float(baseline.stdout), 1),
    )
    for key in ("parse_s", "order_s", "queries_s", "rows_s", "peak_rss_mb"):
        result[key] = round(result[key], 3)
    print(
        f"analysis of {result['events']:,} events ({size_mb:.0f} MB): "
        f"parse {result['parse_s']:.2f} s, "
        f"order {result['order_s']:.2f} s, 3 queries {result['queries_s']:.2f} s = {total:.2f} s "
        f"({result['events_per_s']:,} events/s), peak RSS {result['peak_rss_mb']:.0f} MB "
        f"(imports alone {result['import_rss_mb']:.0f} MB); listing all {result['rows']:,} "
        f"impacted (function, job) rows of one query: {result['rows_s']:.2f} s more"
    )
    shutil.rmtree(folder)
    return result


def _evaluation(quick: bool, budget: Optional[float] = None) -> dict[str, Any]:
    """Recall, precision and warnings on three subjects nobody designed DISTEA for."""
    from distea_eval.evaluate import evaluate

    deadline = time.time() + budget if budget else None
    partial_path = RESULTS / "distea_evaluation.partial.json"

    def partial(result: dict[str, Any]) -> None:
        partial_path.write_text(json.dumps(result, indent=1))

    result = evaluate(quick, WORK / "distea_eval", partial=partial, deadline=deadline)
    partial_path.unlink(missing_ok=True)
    result["measured"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    print("\nevaluation (job / output level, means over mutants that impacted something):")
    for subject in result["subjects"]:
        for tool, levels in subject["summary"].items():
            cells = "  ".join(
                f"{lvl} R={_fmt(levels[lvl]['recall'])} (min {_fmt(levels[lvl]['min_recall'])}) "
                f"P={_fmt(levels[lvl]['precision'])}"
                for lvl in ("job", "output")
            )
            extra = ""
            if tool == "distea":
                extra = f"  warnings/query {levels['warnings_per_query']}"
            print(f"  {subject['subject']:<13} {tool:<11} {cells}{extra}")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 mutants, 4 samples, 100k events")
    parser.add_argument(
        "--skip-accuracy", action="store_true", help="only overhead and scale (keeps accuracy)"
    )
    parser.add_argument(
        "--only-evaluation",
        action="store_true",
        help="only the generated-mutant evaluation on the three subjects (keeps the rest of "
        "the last results)",
    )
    parser.add_argument(
        "--budget", type=float, help="seconds after which no further mutant starts (evaluation)"
    )
    args = parser.parse_args()
    previous = RESULTS / "distea.json"
    if args.only_evaluation:
        result = json.loads(previous.read_text()) if previous.exists() else {}
        for key in ("benchmark", "date", "machine"):
            result.pop(key, None)
        result["evaluation"] = _evaluation(args.quick, args.budget)
        print(f"results: {write_result('distea', result)}")
        return
    result: dict[str, Any] = {"quick": args.quick}
    result["scale"] = scale(args.quick)
    result["tracer_overhead"] = overhead(args.quick)
    if args.skip_accuracy and previous.exists():
        # Re-measuring cost on a quieter machine keeps the (long) accuracy parts of the last run.
        old = json.loads(previous.read_text())
        if "accuracy" in old and old.get("quick") == args.quick:
            result["accuracy"] = old["accuracy"]
            result["accuracy_measured"] = old.get("accuracy_measured", old.get("date"))
        if "evaluation" in old:
            result["evaluation"] = old["evaluation"]
    if not args.skip_accuracy:
        result["evaluation"] = _evaluation(args.quick, args.budget)
        result["accuracy"] = accuracy(args.quick)
        result["accuracy_measured"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    if "accuracy" in result:
        print("\nmeans over non-inert mutants (descriptive ground truth):")
        for tool, levels in result["accuracy"]["summary"].items():
            print(
                f"  {tool:<24}"
                + "  ".join(
                    f"{lvl[:4]} P={_fmt(levels[lvl]['precision'])}"
                    f"/{_fmt(levels[lvl]['precision_empty_as_0'])} R={_fmt(levels[lvl]['recall'])} "
                    f"F1={_fmt(levels[lvl]['f1'])}"
                    for lvl in ("function", "job", "output")
                )
            )
    print(f"results: {write_result('distea', result)}")


if __name__ == "__main__":
    main()
