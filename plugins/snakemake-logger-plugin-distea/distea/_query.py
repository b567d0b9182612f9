"""Impact queries: what a changed function, rule, parameter, input file or template touches.

A change enters the partial order at *source points*: where the changed thing first took
effect in each process (a function's first entry, a parameter's first read, a file's first
read, a template's state build, a job's start). Everything that happens after a source point
(in the happens-before order of :mod:`distea._order`) is impacted:

* functions: in each reached process, those whose last return is at or after the reach
  (EAS within a process), attributed to the job the process served at that moment;
* jobs: those whose end is reached; outputs: the outputs of those jobs.
"""

import difflib
import functools
import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

import numpy as np

from . import _config
from ._model import Process, Trace, gc_paused
from ._order import Order

if TYPE_CHECKING:
    from ._static import Workflow

KINDS = ("func", "rule", "param", "file", "template", "config")


class ChangeSyntaxError(ValueError):
    """A ``--change`` that does not say ``KIND:NAME``."""


@dataclass(frozen=True)
class Change:
    """One changed thing: ``func:pkg.mod.fn``, ``rule:NAME``, ``param:RULE.NAME``,
    ``file:PATH``, ``template:NAME`` or ``config:KEY.PATH`` (a key of Snakemake's config)."""

    kind: str
    name: str

    @classmethod
    def parse(cls, text: str) -> "Change":
        kind, sep, name = text.partition(":")
        if not sep or kind not in KINDS or not name:
            raise ChangeSyntaxError(
                f"cannot read change {text!r}: write KIND:NAME with KIND one of "
                f"{', '.join(KINDS)} (e.g. func:wflib.text.normalize, param:score.threshold, "
                "file:data/S1.txt, template:model, config:model.alpha)"
            )
        return cls(kind, name)

    def __str__(self) -> str:
        return f"{self.kind}:{self.name}"


@dataclass(slots=True)
class Impact:
    """One impacted entity and the causal chain (source first) that explains it."""

    level: str
    """``function``, ``job`` or ``output``."""
    name: str
    context: str
    """For a function: the job (or process) it ran for; for an output: the job writing it."""
    chain: tuple[str, ...]


@dataclass
class _FunctionBlock:
    """The impacted functions of one process, kept as arrays until someone asks for rows."""

    fids: np.ndarray
    requests: np.ndarray
    """0: outside any request (``outside``); k: the k-th request's job (``jobs[k - 1]``)."""
    jobs: list[str]
    outside: str
    chain: tuple[str, ...]

    def contexts(self) -> list[str]:
        jobs, outside = self.jobs, self.outside
        return [jobs[k - 1] if k else outside for k in self.requests.tolist()]


@dataclass
class ImpactResult:
    changes: list[Change]
    sources: list[tuple[str, int, str]]
    """(timeline, clock, what) where the changes entered."""
    jobs: list[Impact] = field(default_factory=list)
    outputs: list[Impact] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    """Blind spots: each says what the answer conservatively includes, or may lack, and why."""
    justified: list[str] = field(default_factory=list)
    """Why an empty part of the answer is right (what DISTEA checked)."""
    function_names: list[str] = field(default_factory=list)
    blocks: list[_FunctionBlock] = field(default_factory=list)
    conservative: dict[str, str] = field(default_factory=dict)
    """Impacted jobs included without proof, and why (an untraced or incomplete trace, a
    blind spot of the source); every other impacted job is proven by the logs."""
    _functions: Optional[list[Impact]] = None

    @property
    @gc_paused()
    def functions(self) -> list[Impact]:
        """Every impacted (function, job) as a row, sorted; built on first use (a million-event
        query can impact hundreds of thousands of them)."""
        if self._functions is None:
            names = self.function_names
            rows = [
                Impact("function", names[f], context, block.chain)
                for block in self.blocks
                for f, context in zip(block.fids.tolist(), block.contexts(), strict=True)
            ]
            rows.sort(key=lambda i: (i.context, i.name))
            self._functions = rows
        return self._functions

    def count(self, level: str) -> int:
        if level == "function":
            return sum(len(b.fids) for b in self.blocks)
        return len(self.jobs if level == "job" else self.outputs)

    def names(self, level: str) -> set[tuple[str, str]]:
        if level == "function":
            names = self.function_names
            return {
                (names[f], c)
                for b in self.blocks
                for f, c in zip(b.fids.tolist(), b.contexts(), strict=True)
            }
        items = self.jobs if level == "job" else self.outputs
        return {(i.name, i.context) for i in items}


JUSTIFIED = "justified: "
"""Marks a note that justifies an empty answer (not a blind spot, so not a warning)."""

PARAM_METHODS = frozenset({"get", "keys", "values", "items", "*", "__iter__"})
"""Recorded parameter "names" that are really a read of the whole ``params`` object (an older
recorder logged ``params.get("x")`` as a read of ``get``): they count as reading every one."""


def source_points(
    order: Order, change: Change, workflow: "Optional[Workflow]" = None
) -> tuple[list[tuple[str, int, str]], list[str]]:
    """Where ``change`` takes effect: (timeline, clock, description) points, plus warnings.

    Where the logs cannot show whether the change took effect (a blind spot: an untraced job,
    code the tracer may not have seen, Snakemake's own process), the point is added anyway,
    conservatively, with a warning that says why.
    """
    trace = order.trace
    points: list[tuple[str, int, str]] = []
    notes: list[str] = []
    procs = {n: p for n, p in trace.processes.items() if n in order.timelines}
    if change.kind == "func":
        _function_points(order, change, workflow, points, notes)
    elif change.kind == "template":
        for name, proc in procs.items():
            for tmpl, clock in proc.templates:
                if tmpl == change.name:
                    where = order.label(name, clock)
                    points.append((name, clock, f"template {tmpl} was built in {where}"))
        if not points:
            notes.append(
                f"template {change.name} was never built in these logs: no traced sticky worker "
                "used it (if a job used it without tracing, rerun with DISTEA_TRACE set)"
            )
    elif change.kind == "rule":
        for key, job in trace.jobs.items():
            if job.rule == change.name:
                points.append((f"job:{key}#start", 0, f"job {key} of rule {job.rule}"))
        if not points:
            notes.append(f"no job of rule {change.name} ran in these logs")
    elif change.kind == "param":
        _param_points(order, change, points, notes)
    elif change.kind == "file":
        path = normalise_path(change.name, trace.workdir)
        if path.endswith((".py", ".smk")) or os.path.basename(path) == "Snakefile":
            # A workflow source file: its code changed (every function in it, its body, and
            # wherever it was read as data).
            code = Change("func", _module_of_path(path))
            _function_points(order, code, workflow, points, notes)
        else:
            _file_points(order, change, workflow, points, notes)
    elif change.kind == "config":
        _config_points(order, [change.name], points, notes)
    return points, notes


def _config_points(
    order: Order, keys: list[str], points: list[tuple[str, int, str]], notes: list[str]
) -> None:
    """Where config keys ``keys`` were read: every read of the key, of a mapping holding it,
    or of a key inside it (Snakemake's own process, scripts, workers, their children)."""
    trace = order.trace
    found = False
    # A config file read as a file (yaml.safe_load(open("config.yaml"))) by workflow code:
    # every key it holds.
    files = {
        path
        for path, held in trace.config_files.items()
        if any(_config.reaches(k, h) for k in keys for h in held)
    }
    for name, proc in trace.processes.items():
        if name not in order.timelines:
            continue
        for path in files:
            clock = proc.opens.get(path)
            if clock is not None:
                found = True
                where = order.label(name, clock)
                points.append((name, clock, f"config file {path} (holding it) read in {where}"))
        for read, clock, _ in proc.config:
            hit = next((k for k in keys if _config.reaches(k, read)), None)
            if hit is not None:
                found = True
                where = order.label(name, clock)
                points.append((name, clock, f"config:{hit} read as {read} in {where}"))
    if any(p.config for p in trace.processes.values()) or _snakemake_traced(order):
        if not found:
            notes.append(f"{JUSTIFIED}no traced code read config key {', '.join(keys)}")
        # An untraced job's code may read the config, unless its rule code (a shell command
        # formatted from it) ran in Snakemake's traced process, where every read is logged.
        ran_here = {
            job for p in trace.processes.values() for job, _, _, _, to_end in p.contexts if to_end
        }
        untraced = [k for k in _untraced_jobs(order) if k not in ran_here]
        if untraced:
            for key in untraced:
                points.append((f"job:{key}#start", 0, f"job {key} (untraced) may read the config"))
            notes.append(
                f"config {', '.join(keys)}: {len(untraced)} jobs ran untraced and may read it, "
                f"so they count as impacted: {', '.join(untraced[:3])}"
                f"{' ...' if len(untraced) > 3 else ''}"
            )
        return
    # Logs without config reads (older logs, Snakemake's process not traced): every job.
    for key, job in trace.jobs.items():
        if job.outputs:
            points.append((f"job:{key}#start", 0, f"job {key} may read the config"))
    notes.append(
        f"config {', '.join(keys)}: these logs do not record config reads (Snakemake's own "
        "process was not traced, or they predate it), so every job counts as impacted"
    )


def config_file_keys(order: Order, path: str) -> Optional[list[str]]:
    """For a config file Snakemake loaded in the logged run: the keys whose values differ
    between the logged run and the file as it is now (every key if it cannot be read); None
    for any other file."""
    recorded = order.trace.config_files.get(path)
    if recorded is None:
        return None
    workdir = order.trace.workdir
    full = path if os.path.isabs(path) or not workdir else os.path.join(workdir, path)
    try:
        import yaml

        with open(full, encoding="utf-8") as f:
            now = yaml.safe_load(f)
    except Exception:
        return sorted(recorded) or [_config.WHOLE]
    return _config.changed_keys(recorded, _config.flatten(now if now is not None else {}))


_PYTHON_WORD = re.compile(r"(^|[\s/(!])python[0-9.]*(\s|\)|$)")


def _runs_python(argv: tuple[str, ...]) -> bool:
    """Does a started program look like a Python interpreter (or a shell running one)?"""
    return any(_PYTHON_WORD.search(word) for word in argv)


def incomplete_jobs(order: Order) -> dict[str, str]:
    """Jobs whose trace is incomplete, and why: a process of theirs ended without writing its
    records (killed), or it started Python programs that left no trace."""
    trace = order.trace
    cached = order.__dict__.get("_incomplete")
    if cached is not None:
        return cached
    found: dict[str, str] = {}
    children: dict[tuple[str, str], int] = {}
    for proc in trace.processes.values():
        if proc.parent and not proc.forked:
            pair = (proc.parent, proc.job or "")
            children[pair] = children.get(pair, 0) + 1
    for name, proc in trace.processes.items():
        if name not in order.timelines:
            continue
        if proc.end is None:
            served = [proc.job] if proc.job else sorted({c.job for c in proc.recvs if c.job})
            for key in served:
                if key:
                    found.setdefault(
                        key, f"its process {name} ended without writing its records (killed?)"
                    )
        started: dict[str, int] = {}
        for _, job, argv in proc.spawns:
            if job and _runs_python(argv):
                started[job] = started.get(job, 0) + 1
        for job, count in started.items():
            traced = children.get((name, job), 0)
            if traced < count:
                found.setdefault(
                    job,
                    f"{order.label(name)} started {count} Python program(s) for it and only "
                    f"{traced} left a trace (another interpreter, python -I/-E/-S, or an "
                    "environment without DISTEA_TRACE)",
                )
    order.__dict__["_incomplete"] = found
    return found


def _untraced_jobs(order: Order) -> list[str]:
    """Jobs with outputs that no traced process executed (their code is a blind spot)."""
    return sorted(
        key for key, job in order.trace.jobs.items() if job.outputs and key not in order.executor
    )


def _snakemake_traced(order: Order) -> bool:
    """Whether Snakemake's own process logged its function calls (DAG-building code)."""
    return any(
        p.role in ("snakemake", "dag") and p.fn_ids and p.end is not None
        for p in order.trace.processes.values()
    )


def _function_points(
    order: Order,
    change: Change,
    workflow: "Optional[Workflow]",
    points: list[tuple[str, int, str]],
    notes: list[str],
) -> None:
    trace = order.trace
    ids = _matching_functions(trace, change.name)
    if not ids and "." not in change.name:
        # A bare function name (``get_scale``, defined in rules/common.smk): every traced
        # function of that name, in whichever file defines it.
        suffix = "." + change.name
        ids = [i for f, i in trace.function_ids.items() if f.endswith(suffix)]
        if ids:
            names = sorted(f for f in trace.function_ids if f.endswith(suffix))
            notes.append(f"{JUSTIFIED}{change.name} taken as {', '.join(names[:5])}")
    _read_as_source(order, change, ids, points, notes)
    module = workflow.module_of(change.name) if workflow else None
    last = change.name.rsplit(".", 1)[-1]
    in_snakefile = workflow is not None and bool(
        re.search(rf"^\s*def {re.escape(last)}\s*\(", workflow.snakefile_text, re.M)
    )
    defined = workflow is not None and (
        in_snakefile
        or change.name in workflow.functions
        or any(f.startswith(change.name + ".") for f in workflow.functions)
    )
    indirect = _indirect(workflow, change.name) if workflow else None
    body = _enclosing_body(trace, change.name)
    script_local = (
        body is not None and body.endswith(".<module>") and _is_script_body(trace, body, workflow)
    )
    # Code that records nothing of its own even under a complete tracer: its enclosing body
    # stands in. A lambda or a Snakemake rule function (left as written by instrument), or a
    # script's function where none of that script's functions recorded (its autotrace import
    # was not a top-level statement, so its functions kept their plain code).
    as_written = (
        body is not None
        and not ids
        and (
            _left_as_written(change.name)
            or script_local
            and not any(
                f.startswith(body[: -len("<module>")]) and f != body for f in trace.function_ids
            )
        )
    )
    blind: list[str] = []
    unseen: list[str] = []
    # Membership of the matching ids as a table lookup (np.isin per process costs a sort).
    wanted = np.zeros(len(trace.functions) + 1, dtype=bool)
    wanted[ids] = True
    for name, proc in trace.processes.items():
        if name not in order.timelines:
            continue
        fids, first, _ = proc.arrays()
        if not len(fids):
            continue
        clocks: list[int] = []
        if fids.min() >= 0 and fids.max() < len(wanted):
            mask = wanted[fids]
        else:  # ids not from this trace's table (a hand-built trace)
            mask = np.isin(fids, ids)
        if mask.any():
            clocks.append(int(first[mask].min()))
        cuts = order.timelines[name].cuts
        # The wrap tracer cannot see a script's own functions, nested functions, or calls
        # through references taken when the module loaded: the enclosing body stands in.
        reason = None
        if not proc.complete and body is not None:
            if script_local:
                reason = "a function of a script file is not traced individually by wrap"
            elif indirect is not None:
                reason = f"its calls may bypass the wrap tracer ({indirect})"
            elif workflow is None and not mask.any():
                reason = "no sources to show that it was never called"
        wrap_blind = reason is not None
        if reason is None and as_written:
            reason = "not traced individually"
        later: list[int] = []
        if reason is not None and body is not None:  # every reason above needs a body
            body_mask = np.equal(fids, trace.function_ids[body])
            if body_mask.any():
                loaded = int(first[body_mask].min())
                clocks.append(loaded)
                # Unseen calls may happen in any request the worker serves after the load.
                later = [c for c in cuts if c > loaded]
                blind_spot = f"{order.label(name)}: {reason}"
                (blind if wrap_blind else unseen).append(blind_spot)
        if clocks:
            where = order.label(name, min(clocks))
            points.append((name, min(clocks), f"{change} first ran in {where}"))
        # A worker whose requests are cut apart (evidence that its state did not carry):
        # the function's first run in each request is a source of its own.
        if cuts and mask.any():
            requests = np.searchsorted(np.asarray(cuts), first[mask], side="right")
            for k in np.unique(requests).tolist():
                clock = int(first[mask][requests == k].min())
                if clock > min(clocks):
                    where = order.label(name, clock)
                    points.append((name, clock, f"{change} ran again in {where}"))
        for clock in later:
            where = order.label(name, clock)
            points.append((name, clock, f"{change} may have run unseen in {where}"))
    if blind:
        notes.append(
            f"{change}: in {len(blind)} processes traced by the wrap tracer it may have run "
            f"unseen; they count as impacted from the load of {body} ({blind[0]}); "
            "DISTEA_TRACE_MODE=settrace sees every call"
        )
    if unseen:
        notes.append(
            f"function {change.name} was not traced individually (a lambda, a Snakemake rule "
            "function, or a script's function under the instrument tracer where none of the "
            f"script's functions recorded); its body {body} is the source instead, in "
            f"{len(unseen)} processes ({unseen[0]})"
        )
    # Jobs that ran without a tracer: can they run this code?
    reasons: list[str] = []
    for key in _untraced_jobs(order):
        rule = trace.jobs[key].rule
        why = "its code is unknown"
        if workflow is not None:
            why = workflow.rule_may_run(rule, module or "Snakefile") or ""
        if why:
            points.append((f"job:{key}#start", 0, f"job {key} was not traced and may run it"))
            reasons.append(f"{key} ({why})")
    if reasons:
        notes.append(
            f"{change}: {len(reasons)} jobs were not traced and may run it, so they count as "
            f"impacted: {', '.join(reasons[:3])}{' ...' if len(reasons) > 3 else ''}; trace "
            "them (import distea.autotrace in their script) for a precise answer"
        )
    # Snakemake's own process evaluates the Snakefile's helpers (input functions, params).
    if workflow is not None and not _snakemake_traced(order):
        imported = in_snakefile or (
            module is not None
            and any(module == m or module.startswith(m + ".") for m in workflow.snakefile_modules)
        )
        if imported:
            for key in sorted(k for k, j in trace.jobs.items() if j.outputs):
                points.append(
                    (f"job:{key}#start", 0, f"Snakemake's process may run {change.name} for it")
                )
            where = "defines it" if in_snakefile else f"imports {module}"
            notes.append(
                f"{change}: the Snakefile {where}, and Snakemake's own process (input "
                "functions, params callables) was not traced, so every job counts as impacted"
            )
    local = workflow is not None and workflow.module_of(change.name) is not None
    if workflow is not None and not defined and not ids and not local and _installed(change.name):
        # Library code: never traced, and it may run anywhere (scripts, workers, Snakemake).
        for key in sorted(k for k, j in trace.jobs.items() if j.outputs):
            points.append((f"job:{key}#start", 0, f"job {key} may call {change.name}"))
        notes.append(
            f"{change} is outside the traced code (an installed package, not the workflow's): "
            "its calls are never recorded, so every job counts as impacted"
        )
    if points:
        if workflow is not None and module is not None and not defined and not ids:
            # A typo of a workflow function (issue 31's red team) read like a confident
            # answer: say the name is not there, and what the answer then means.
            close = difflib.get_close_matches(change.name, list(workflow.functions), n=1)
            hint = f" (did you mean func:{close[0]}?)" if close else ""
            notes.append(
                f"{change}: {module} defines no {change.name[len(module) + 1 :]}{hint}; "
                f"answered as a change adding it to {module}: whatever ran or read that module"
            )
        return
    if workflow is not None and not defined and not ids:
        close = difflib.get_close_matches(change.name, list(workflow.functions), n=1)
        hint = f"; did you mean func:{close[0]}?" if close else ""
        notes.append(
            f"{JUSTIFIED}{change} is not a function of this workflow (no definition under "
            f"{workflow.root}; check the name: module path from the workflow directory){hint}"
        )
    elif workflow is None:
        notes.append(
            f"{change} never ran in the traced processes, and the workflow's sources were not "
            "found to confirm that nothing untraced could run it (run the query where the "
            "workflow directory of the logger's log exists)"
        )
    else:
        notes.append(
            f"{JUSTIFIED}{change} never ran in these logs, and no untraced process could run "
            "it: nothing is impacted"
        )


def _left_as_written(name: str) -> bool:
    """Whether ``name`` is code that records nothing of its own under any tracer's log: a
    lambda (left as written by the instrument tracer) or a Snakemake rule function."""
    parts = name.split(".")
    return "<lambda>" in parts or parts[-1].startswith("__rule_")


def _installed(name: str) -> bool:
    """Whether the top-level package of ``name`` is an installed library (not imported)."""
    import importlib.util

    top = name.split(".", 1)[0]
    try:
        return importlib.util.find_spec(top) is not None
    except (ImportError, ValueError):
        return False


def _indirect(workflow: "Workflow", name: str) -> Optional[str]:
    """The evidence that calls of ``name`` (or a nested function of it) may bypass wrapping."""
    found = workflow.indirect.get(name)
    if found is None:
        prefix = name + "."
        found = next((v for k, v in workflow.indirect.items() if k.startswith(prefix)), None)
    return found


def _read_as_source(
    order: Order,
    change: Change,
    ids: list[int],
    points: list[tuple[str, int, str]],
    notes: list[str],
) -> None:
    """A workflow file read as data (``exec(open(f).read())``, ``runpy.run_path``) runs its
    code without recording it: where the changed function's file was read so, it may have
    run from that read on (a warning says so)."""
    if ids:
        return
    found = []
    for name, proc in order.trace.processes.items():
        if name not in order.timelines:
            continue
        for path, clock in proc.opens.items():
            if not path.endswith(".py"):
                continue
            module = _module_of_path(path)
            if change.name == module or change.name.startswith(module + "."):
                where = order.label(name, clock)
                points.append((name, clock, f"{where} read {path} (its code may run unseen)"))
                found.append(f"{where} read {path}")
    if found:
        notes.append(
            f"{change}: its file was read as data and may have run outside the import system "
            f"(exec, runpy), untraced; the processes that read it count from the read: "
            f"{', '.join(found[:3])}"
        )


def _module_of_path(path: str) -> str:
    """``wf/snip.py`` -> ``wf.snip`` (as the tracer names a workflow file's code)."""
    name = path[:-3] if path.endswith(".py") else path
    return name.replace("\\", "/").strip("/").replace("/", ".")


def _matching_functions(trace: Trace, name: str) -> list[int]:
    """Ids of ``name`` itself, its nested functions, or every function of a module ``name``."""
    prefix = name + "."
    return [i for f, i in trace.function_ids.items() if f == name or f.startswith(prefix)]


def _enclosing_body(trace: Trace, name: str) -> Optional[str]:
    """The innermost traced function enclosing ``name`` (``f`` for ``m.f.<locals>.<lambda>``:
    the lambda exists only once ``f`` ran), else the ``<module>`` body of the longest module
    prefix of ``name``, if any."""
    parts = name.split(".")
    for end in range(len(parts) - 1, 0, -1):
        prefix = ".".join(parts[:end])
        if (
            parts[end - 1] != "<locals>"
            and "<locals>" in parts[end:]
            and (prefix in trace.function_ids)
        ):
            return prefix
        body = prefix + ".<module>"
        if body in trace.function_ids:
            return body
    return None


def _is_script_body(trace: Trace, body: str, workflow: "Optional[Workflow]") -> bool:
    """Whether ``X.<module>`` is the body of a rule's script (run as ``__main__``)."""
    module = body[: -len(".<module>")]
    if workflow is not None:
        scripts = {r.script for r in workflow.rules.values() if r.script}
        return any(s[:-3].replace("/", ".") == module for s in scripts if s.endswith(".py"))
    bid = trace.function_ids.get(body)
    for proc in trace.processes.values():
        fids, first, _ = proc.arrays()
        if proc.job and len(fids) and (fids == bid).any():
            # A script's body is entered as tracing starts; an imported module's later.
            return int(first[fids == bid].min()) <= 2
    return False


def _param_points(
    order: Order, change: Change, points: list[tuple[str, int, str]], notes: list[str]
) -> None:
    trace = order.trace
    rule, _, param = change.name.rpartition(".")
    read: dict[str, tuple[str, int]] = {}
    whole: set[str] = set()
    for name, proc in trace.processes.items():
        if name not in order.timelines:
            continue
        for pname, clock, jkey in proc.params:
            if not jkey or (rule and jkey.split("[", 1)[0] != rule):
                continue
            if pname == param or pname in PARAM_METHODS:
                if pname != param:
                    whole.add(jkey)
                if jkey not in read or clock < read[jkey][1]:
                    read[jkey] = (name, clock)
    untraced: list[str] = []
    for key, job in trace.jobs.items():
        if rule and job.rule != rule:
            continue
        # Parameter reads are recorded where a job's ``snakemake`` object is watched: a
        # script, a sticky request. A shell: command or run: block uses them through
        # Snakemake (formatting the command), unrecorded, even when its programs are traced.
        watched = any(
            trace.processes[p].role in ("script", "worker") for p, _ in order.executor.get(key, [])
        )
        if key in read:
            name, clock = read[key]
            how = "read params" if key in whole else f"read params.{param}"
            points.append((name, clock, f"job {job.key} {how}"))
        elif not watched and job.outputs and (rule or param in job.wildcards):
            # It may use the parameter anywhere (shell command, run: block).
            points.append((f"job:{key}#start", 0, f"job {job.key} (untraced) may use {param}"))
            untraced.append(key)
    if whole:
        notes.append(
            f"{change}: {len(whole)} jobs read their params as a whole (e.g. params.get), so "
            "each counts as reading it"
        )
    if untraced:
        notes.append(
            f"{change}: {len(untraced)} jobs of rule {rule} use their params where no read is "
            "recorded (untraced, or a shell: command or run: block); they count as reading it"
        )
    if not points:
        notes.append(
            f"no traced job read parameter {change.name} (every job of rule {rule} was traced)"
            if any(j.rule == rule for j in trace.jobs.values())
            else f"no job of rule {rule} ran in these logs"
        )


@functools.lru_cache(maxsize=65536)
def normalise_path(path: str, workdir: Optional[str]) -> str:
    """A file as the logs name it: relative to the workflow directory, ``./`` and ``..``
    resolved (``file:/abs/wf/data/C.csv`` and ``file:./data/C.csv`` are the same file).

    Pure string work, cached: a file query normalises every logged read and declared input.
    """
    text = os.path.normpath(path)
    if os.path.isabs(text) and workdir:
        root = os.path.normpath(workdir)
        if text.startswith(root + os.sep):
            text = text[len(root) + 1 :]
    return text


def _file_points(
    order: Order,
    change: Change,
    workflow: "Optional[Workflow]",
    points: list[tuple[str, int, str]],
    notes: list[str],
) -> None:
    trace = order.trace
    workdir = trace.workdir or (str(workflow.root) if workflow else None)
    path = normalise_path(change.name, workdir)
    keys = config_file_keys(order, path)
    if keys is not None:  # a config file: its changed keys are the change
        if keys:
            _config_points(order, keys, points, notes)
            notes.append(
                f"{JUSTIFIED}config file {path}: keys changed since the run: "
                f"{', '.join(keys[:10])}{' ...' if len(keys) > 10 else ''}"
            )
        else:
            notes.append(f"{JUSTIFIED}config file {path}: no key's value differs from the run")
    for name, proc in trace.processes.items():
        if name not in order.timelines:
            continue
        opened = {normalise_path(p, workdir): c for p, c in proc.opens.items()}
        clock = opened.get(path)
        # A listing of a folder holding the file (a glob, glob_wildcards): adding, removing
        # or renaming it changes what the listing returned.
        listed = [
            (c, p) for p, c in proc.opens.items() if p.endswith("/") and _holds(p, path, workdir)
        ]
        if listed:
            when, folder = min(listed)
            where = order.label(name, when)
            points.append((name, when, f"{where} listed {folder}, which holds {path}"))
        if clock is not None:
            points.append((name, clock, f"{order.label(name, clock)} read {path}"))
            # A worker with cut requests logs its first read in each request (same tracer
            # version as the state evidence): the reads of later requests are sources too.
            for path_read, when in proc.reads:
                if when > clock and normalise_path(path_read, workdir) == path:
                    where = order.label(name, when)
                    points.append((name, when, f"{where} read {path}"))
    traced_readers = {p for p, _, _ in points}
    read = any(" read " in why for _, _, why in points)
    here = os.path.join(workdir, path) if workdir and not os.path.isabs(path) else path
    if points and not read and not os.path.lexists(here):
        # Issue 31's red team: a mistyped path was answered as impacting every job, through
        # listings of a folder that would hold it, without a word that it does not exist.
        notes.append(
            f"{change}: no traced process read {path}, and it does not exist here; what it "
            "impacts comes only from listings of folders that would hold it if it were "
            "created (check the path)"
        )
    declared = False
    for key, job in trace.jobs.items():
        if any(
            normalise_path(p, workdir) == path or _holds(p, path, workdir) for p, _ in job.inputs
        ):  # the file itself, or a folder input holding it
            declared = True
            executors = {p for p, _ in order.executor.get(key, [])}
            if not executors & traced_readers:
                points.append((f"job:{key}#start", 0, f"job {key} has {path} as input"))
    if declared:
        return
    # Not a declared input: who else could read it?
    if workflow is not None and not _snakemake_traced(order):
        base = os.path.basename(path)
        if base and base in workflow.snakefile_text:
            for key, job in trace.jobs.items():
                if job.outputs:
                    points.append(
                        (f"job:{key}#start", 0, f"the Snakefile names {path} (read by Snakemake)")
                    )
            notes.append(
                f"{change}: the Snakefile names {path} and Snakemake's own process was not "
                "traced (it may read it to build the DAG: config, sample sheet), so every job "
                "counts as impacted"
            )
            return
    # Programs other than Python that traced jobs started (sort, awk, a compiled tool) read
    # files DISTEA does not see: a job that started one may read it.
    started: dict[str, list[str]] = {}
    for proc in trace.processes.values():
        for _, runner, argv in proc.spawns:
            if runner and argv and argv != ("<fork>",) and not _runs_python(argv):
                started.setdefault(runner, []).append(" ".join(argv)[:60])
    if started and not points:
        for key in sorted(started):
            points.append(
                (f"job:{key}#start", 0, f"job {key} ran {started[key][0]}, which may read it")
            )
        named = [k for k, argvs in started.items() if any(path in a for a in argvs)]
        notes.append(
            f"{change}: no traced code read {path}, but {len(started)} jobs ran programs DISTEA "
            f"cannot trace, which may read it (they count as impacted"
            f"{'; ' + ', '.join(named[:3]) + ' name it' if named else ''}): "
            f"{', '.join(sorted(started)[:3])}{' ...' if len(started) > 3 else ''}"
        )
        return
    untraced = _untraced_jobs(order)
    if untraced and not points:
        for key in untraced:
            points.append((f"job:{key}#start", 0, f"job {key} was not traced and may read it"))
        notes.append(
            f"{change}: not a declared input and no traced process read it; {len(untraced)} "
            "untraced jobs may read it undeclared, so they count as impacted"
        )
    elif not points:
        notes.append(
            f"{JUSTIFIED}no job read {path} (not a declared input, every job was traced, and "
            "the Snakefile does not name it)"
        )


def _holds(folder: str, path: str, workdir: Optional[str]) -> bool:
    """Is ``path`` inside ``folder`` (a listing ``dir/``, or a declared folder input)?"""
    base = folder.rstrip("/")
    base = "" if base in ("", ".") else normalise_path(base, workdir)
    return bool(path) and path != base and (not base or path.startswith(base + "/"))


def _contexts(proc: Process) -> tuple[np.ndarray, list[str]]:
    """For each request a process served: its start clock; and the job keys, in order."""
    starts, _, jobs = _requests(proc)
    return starts, jobs


def _requests(proc: Process) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The requests a process served, in order: start clocks, end clocks, job keys.

    A worker's request lasts until the next one; a context of Snakemake's process (the
    computation of one job's input or params) ends at its own end clock.
    """
    cached = proc.__dict__.get("_contexts")
    if cached is None:
        if proc.contexts:
            spans = sorted((a, b, job) for job, a, b, _, _ in proc.contexts)
            starts = [a for a, _, _ in spans]
            ends = [b for _, b, _ in spans]
            jobs = [job for _, _, job in spans]
        else:
            starts = [c.clock for c in proc.recvs if c.job]
            ends = [np.iinfo(np.int64).max] * len(starts)
            jobs = [c.job or "" for c in proc.recvs if c.job]
        cached = (np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64), jobs)
        proc.__dict__["_contexts"] = cached
    return cached


def _blind(description: str) -> bool:
    """Is a source point a blind spot's stand-in (rather than something the logs show)?"""
    return " may " in description or "(untraced)" in description or "names" in description


def workflow_of(order: Order) -> "Optional[Workflow]":
    """The workflow sources of the logged run (its directory from the logger), read once."""
    if "workflow" not in order.__dict__:
        from ._static import load_workflow

        order.__dict__["workflow"] = load_workflow(order.trace.workdir)
    return order.__dict__["workflow"]


@gc_paused()
def impact(
    order: Order,
    changes: list[Change],
    explain: bool = True,
    workflow: "Optional[Workflow]" = None,
) -> ImpactResult:
    """The impact set of ``changes`` (their union), with a causal chain for each entity.

    ``workflow``: the workflow's sources (default: read from the directory the logger
    recorded), used only to decide blind spots conservatively.
    """
    trace = order.trace
    if workflow is None:
        workflow = workflow_of(order)
    sources: list[tuple[str, int, str]] = []
    result = ImpactResult(changes, sources, function_names=trace.functions)
    for change in changes:
        points, notes = source_points(order, change, workflow)
        sources.extend(points)
        for note in notes:
            if note.startswith(JUSTIFIED):
                result.justified.append(note[len(JUSTIFIED) :])
            else:
                result.warnings.append(note)
    reach = order.reach([(n, c) for n, c, _ in sources])

    def chain(name: str, clock: int) -> tuple[str, ...]:
        if not explain:
            return ()
        index, steps = reach.chain(name, clock)
        head = [sources[index][2]] if index is not None else []
        return tuple(head + steps)

    for name, ranges in reach.ranges.items():
        proc = trace.processes.get(name)
        if proc is None or not proc.fn_ids:
            continue
        fids, first, last = proc.arrays()
        starts, ends, jobs = _requests(proc)
        # Ranges ending at the same cut are nested: the earliest start covers them all, so each
        # stretch between cuts is queried once (no duplicate rows).
        earliest: dict[Optional[int], int] = {}
        for clock, until in ranges:
            if clock < earliest.get(until, clock + 1):
                earliest[until] = clock
        for until, clock in sorted(earliest.items(), key=lambda item: item[1]):
            hit_mask = last >= clock
            if until is not None:
                hit_mask &= first < until
            hit = np.nonzero(hit_mask)[0]
            if not len(hit):
                continue
            why = chain(name, clock)
            # One (function, request) pair per impacted record, deduplicated in numpy.
            if len(starts):
                request = np.searchsorted(starts, first[hit], side="right")
                # A record after a request's end (a context of Snakemake's process) is outside.
                inside = request > 0
                inside[inside] = first[hit][inside] <= ends[request[inside] - 1]
                request = np.where(inside, request, 0)
                outside = name
            else:
                request = np.zeros(len(hit), dtype=np.int64)
                outside = proc.job or name
            width = len(jobs) + 1
            pairs = np.unique(fids[hit] * width + request)
            result.blocks.append(_FunctionBlock(pairs // width, pairs % width, jobs, outside, why))
    incomplete = incomplete_jobs(order)
    for key, job in trace.jobs.items():
        name = f"job:{key}#end"
        # A target without outputs (``all``) produces nothing that could change.
        if not job.outputs:
            continue
        if name in reach.reached:
            index, steps = reach.chain(name, 0)
            why = chain(name, 0)
            head = sources[index][2] if index is not None else ""
            if key in incomplete:
                result.conservative[key] = f"its trace is incomplete: {incomplete[key]}"
            elif _blind(head):
                result.conservative[key] = f"reached from a blind spot: {head}"
        elif key in incomplete:
            # Not reached in the logs, but they may lack what would reach it: included.
            why = (f"job {key}: {incomplete[key]}",)
            result.conservative[key] = f"its trace is incomplete: {incomplete[key]}"
            result.warnings.append(
                f"job {key} counts as impacted: {incomplete[key]}; rerun it traced for a "
                "precise answer"
            )
        else:
            continue
        result.jobs.append(Impact("job", key, job.rule, why))
        for path, _ in job.outputs:
            result.outputs.append(Impact("output", path, key, why))
    result.jobs.sort(key=lambda i: i.name)
    result.outputs.sort(key=lambda i: i.name)
    return result
