"""Baselines the benchmark compares DISTEA against (not used by the CLI).

* :func:`lamport_impact`: DistIA/DistEA's basic rule (Cai & Thain): a function is impacted if
  its last Lamport timestamp, in *any* process, is at least the changed thing's first
  timestamp. Lamport order admits concurrent events, and the rule knows no files.
* :func:`dag_descendants`: the static answer: the seed jobs and every job downstream of them
  through declared inputs and outputs (what ``snakemake -n -R`` would rerun).
* :func:`import_closure`: the workflow modules a script can reach through ``import`` (AST), to
  decide statically which rules a changed helper function may touch.
"""

import ast
from collections import deque
from pathlib import Path

import numpy as np

from ._model import Trace
from ._order import Order
from ._query import Change, _contexts, source_points


def lamport_impact(order: Order, changes: list[Change]) -> tuple[set[tuple[str, str]], set[str]]:
    """(function, context) pairs and jobs impacted under the Lamport-timestamp rule."""
    trace = order.trace
    clocks = [c for change in changes for _, c, _ in source_points(order, change)[0]]
    functions: set[tuple[str, str]] = set()
    jobs: set[str] = set()
    if not clocks:
        return functions, jobs
    start = min(clocks)
    for proc in trace.processes.values():
        fids, first, last = proc.arrays()
        hit = np.nonzero(last >= start)[0]
        starts, keys = _contexts(proc)
        for i in hit:
            context = proc.job or proc.name
            if len(starts):
                k = int(np.searchsorted(starts, first[i], side="right")) - 1
                context = keys[k] if k >= 0 else proc.name
            functions.add((trace.functions[int(fids[i])], context))
            if context in trace.jobs:
                jobs.add(context)
    return functions, jobs


def dag_descendants(trace: Trace, seeds: set[str]) -> set[str]:
    """``seeds`` and every job that (transitively) reads an output of one of them."""
    readers: dict[str, list[str]] = {}
    for key, reading in trace.jobs.items():
        for path, _ in reading.inputs:
            readers.setdefault(path, []).append(key)
    found = set(seeds)
    queue = deque(seeds)
    while queue:
        job = trace.jobs.get(queue.popleft())
        if job is None:
            continue
        for path, _ in job.outputs:
            for reader in readers.get(path, []):
                if reader not in found:
                    found.add(reader)
                    queue.append(reader)
    return found


def import_closure(script: Path, root: Path) -> set[str]:
    """Dotted names of the workflow modules (under ``root``) that ``script`` can import."""
    seen: set[str] = set()
    queue = deque([script])
    while queue:
        path = queue.popleft()
        try:
            tree = ast.parse(path.read_text(), str(path))
        except (OSError, SyntaxError):
            continue
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            for name in names:
                if name in seen:
                    continue
                candidate = root / (name.replace(".", "/") + ".py")
                package = root / name.replace(".", "/") / "__init__.py"
                for file in (candidate, package):
                    if file.exists():
                        seen.add(name)
                        queue.append(file)
    return seen
