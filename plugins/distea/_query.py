"""Impact queries: what a changed function, rule, parameter, input file or template touches.

A change enters the partial order at *source points*: where the changed thing first took
effect in each process (a function's first entry, a parameter's first read, a file's first
read, a template's state build, a job's start). Everything that happens after a source point
(in the happens-before order of :mod:`distea._order`) is impacted:

* functions: in each reached process, those whose last return is at or after the reach
  (EAS within a process), attributed to the job the process served at that moment;
* jobs: those whose end is reached; outputs: the outputs of those jobs.
"""

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from ._model import Process, Trace
from ._order import Order

KINDS = ("func", "rule", "param", "file", "template")


class ChangeSyntaxError(ValueError):
    """A ``--change`` that does not say ``KIND:NAME``."""


@dataclass(frozen=True)
class Change:
    """One changed thing: ``func:pkg.mod.fn``, ``rule:NAME``, ``param:RULE.NAME``,
    ``file:PATH`` or ``template:NAME``."""

    kind: str
    name: str

    @classmethod
    def parse(cls, text: str) -> "Change":
        kind, sep, name = text.partition(":")
        if not sep or kind not in KINDS or not name:
            raise ChangeSyntaxError(
                f"cannot read change {text!r}: write KIND:NAME with KIND one of "
                f"{', '.join(KINDS)} (e.g. func:wflib.text.normalize, param:score.threshold, "
                "file:data/S1.txt, template:model)"
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
    function_names: list[str] = field(default_factory=list)
    blocks: list[_FunctionBlock] = field(default_factory=list)
    _functions: Optional[list[Impact]] = None

    @property
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


def source_points(order: Order, change: Change) -> tuple[list[tuple[str, int, str]], list[str]]:
    """Where ``change`` takes effect: (timeline, clock, description) points, plus warnings."""
    trace = order.trace
    points: list[tuple[str, int, str]] = []
    notes: list[str] = []
    procs = {n: p for n, p in trace.processes.items() if n in order.timelines}
    if change.kind == "func":
        ids = _matching_functions(trace, change.name)
        body = _enclosing_body(trace, change.name) if not ids else None
        if body is not None:
            ids = [trace.function_ids[body]]
            notes.append(
                f"function {change.name} was not traced individually (a lambda, a Snakemake rule "
                f"function, or a script's function under the instrument tracer); its body {body} "
                "is the source instead"
            )
        if not ids:
            notes.append(
                f"function {change.name} never ran in these logs: nothing it could impact was "
                "executed (check the name: module path from the workflow directory, dotted)"
            )
        for name, proc in procs.items():
            fids, first, _ = proc.arrays()
            if not len(fids):
                continue
            mask = np.isin(fids, ids)
            if mask.any():
                points.append((name, int(first[mask].min()), f"{change} first ran in {name}"))
    elif change.kind == "template":
        for name, proc in procs.items():
            for tmpl, clock in proc.templates:
                if tmpl == change.name:
                    points.append((name, clock, f"template {tmpl} built in {name}"))
        if not points:
            notes.append(f"template {change.name} was never built in these logs")
    elif change.kind == "rule":
        for key, job in trace.jobs.items():
            if job.rule == change.name:
                points.append((f"job:{key}#start", 0, f"job {key} of rule {job.rule}"))
        if not points:
            notes.append(f"no job of rule {change.name} ran in these logs")
    elif change.kind == "param":
        rule, _, param = change.name.rpartition(".")
        read: dict[str, tuple[str, int]] = {}
        for name, proc in procs.items():
            for pname, clock, job in proc.params:
                if pname == param and job and (not rule or job.split("[", 1)[0] == rule):
                    if job not in read or clock < read[job][1]:
                        read[job] = (name, clock)
        for key, job in trace.jobs.items():
            if rule and job.rule != rule:
                continue
            if key in read:
                name, clock = read[key]
                points.append((name, clock, f"{job.key} read params.{param}"))
            elif key not in order.executor and (rule or param in job.wildcards):
                # Untraced job: it may use the parameter anywhere (shell command, run: block).
                points.append((f"job:{key}#start", 0, f"{job.key} (untraced) may use {param}"))
        if not points:
            notes.append(f"no job read parameter {change.name}")
    elif change.kind == "file":
        path = change.name.removeprefix("./")
        for name, proc in procs.items():
            clock = proc.opens.get(path)
            if clock is not None:
                points.append((name, clock, f"{name} read {path}"))
        traced_readers = {p for p, _, _ in points}
        for key, job in trace.jobs.items():
            if any(p == path for p, _ in job.inputs):
                executors = {p for p, _ in order.executor.get(key, [])}
                if not executors & traced_readers:
                    points.append((f"job:{key}#start", 0, f"{key} has {path} as input"))
        if not points:
            notes.append(f"no job read {path}")
    return points, notes


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


def impact(order: Order, changes: list[Change], explain: bool = True) -> ImpactResult:
    """The impact set of ``changes`` (their union), with a causal chain for each entity."""
    trace = order.trace
    sources: list[tuple[str, int, str]] = []
    result = ImpactResult(changes, sources, function_names=trace.functions)
    for change in changes:
        points, notes = source_points(order, change)
        sources.extend(points)
        result.warnings.extend(notes)
    reach = order.reach([(n, c) for n, c, _ in sources])

    def chain(name: str, clock: int) -> tuple[str, ...]:
        if not explain:
            return ()
        index, steps = reach.chain(name, clock)
        head = [sources[index][2]] if index is not None else []
        return tuple(head + steps)

    for name, clock in reach.reached.items():
        proc = trace.processes.get(name)
        if proc is None or not proc.fn_ids:
            continue
        fids, first, last = proc.arrays()
        hit = np.nonzero(last >= clock)[0]
        if not len(hit):
            continue
        why = chain(name, clock)
        starts, ends, jobs = _requests(proc)
        # One (function, request) pair per impacted record, deduplicated in numpy.
        if len(starts):
            request = np.searchsorted(starts, first[hit], side="right")
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
    for key, job in trace.jobs.items():
        name = f"job:{key}#end"
        if name in reach.reached:
            why = chain(name, 0)
            result.jobs.append(Impact("job", key, job.rule, why))
            for path, _ in job.outputs:
                result.outputs.append(Impact("output", path, key, why))
    result.jobs.sort(key=lambda i: i.name)
    result.outputs.sort(key=lambda i: i.name)
    return result
