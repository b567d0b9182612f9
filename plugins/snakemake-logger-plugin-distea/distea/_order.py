"""The happens-before partial order across processes, as a condensed networkx DAG.

A node is a *segment*: the stretch of one process's timeline from one incoming edge (a message
received, a file read, the job start) to the next. Within a process, segments follow each
other (program order, and a worker's state carries across requests); an edge from a send at
clock ``s`` in segment ``u`` to the segment that begins at the receive. Everything in a segment
reached at its start happens after that receive, so reachability over segments is exact
happens-before, except inside the segment that contains a query's own source point, whose
earlier sends are excluded at query time (:meth:`Order.reach`). Per-event data (function
spans) never becomes nodes: a process reached from clock ``d`` on is queried with numpy.

Two kinds of timeline have no code of their own:

* a *job* (from the logger): ``start`` feeds its inputs and parameters to whatever executes it
  (a traced script process at clock 0, a sticky worker at the receipt of its invocation);
  ``end`` is reached when its executor finished, and feeds its outputs to the jobs reading them;
* a *hub* (the sticky manager, the Snakemake process): it only routes. Its own program order is
  not causal (one job's result does not flow into the next job it dispatches), so a message to
  or from a hub is rewired to the job it carries.
"""

import bisect
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Optional

import networkx as nx

from ._model import Job, Process, StateNote, Trace, gc_paused

HUB_ROLES = frozenset({"sticky-manager", "snakemake"})
SUPER_SOURCE = -1


@dataclass
class Timeline:
    """Segment starts of one process or job half, and its sends (clock, target node)."""

    name: str
    kind: str
    """``process``, ``job-start`` or ``job-end``."""
    starts: list[int] = field(default_factory=lambda: [0])
    base: int = 0
    sends: list[tuple[int, int]] = field(default_factory=list)
    cuts: list[int] = field(default_factory=list)
    """Clocks where program order does not carry a change: a sticky worker's next request,
    when the worker showed that its carried state did not change (the state timeline
    ``state:NAME`` carries it instead, from the requests that did change it)."""

    def segment(self, clock: int) -> int:
        """Node id of the segment containing ``clock``."""
        return self.base + max(0, bisect.bisect_right(self.starts, clock) - 1)

    def until(self, clock: int) -> Optional[int]:
        """The first cut after ``clock`` (where a reach from ``clock`` stops), or None."""
        i = bisect.bisect_right(self.cuts, clock)
        return self.cuts[i] if i < len(self.cuts) else None


@dataclass
class Order:
    """The condensed partial order of one trace, plus what is needed to explain a path."""

    trace: Trace
    graph: nx.DiGraph
    timelines: dict[str, Timeline]
    node_owner: list[str]
    node_start: list[int]
    edge_why: dict[tuple[int, int], str]
    executor: dict[str, list[tuple[str, int]]]
    """Job key -> [(process, clock at which the process began serving it)]."""
    kinds: dict[tuple[str, str], str] = field(default_factory=dict, repr=False)
    """:attr:`edge_kind` without the pairs of :attr:`carried` (added on first use)."""
    carried: list[list[str]] = field(default_factory=list, repr=False)
    """The jobs served one after another, in order, by each worker without state evidence
    (its state carries from each to every later one)."""

    @property
    def edge_kind(self) -> dict[tuple[str, str], str]:
        """(job, job) -> how a change can pass between them: ``file``, ``state`` (a sticky
        worker's carried state) or ``message``; for the job graph of the report.

        Built on first use: a worker without state evidence pairs every job it served with
        every later one, quadratic in its requests (a million-event trace: most of the
        memory of the order, and no query needs them).
        """
        kinds = self.kinds
        while self.carried:
            served = self.carried.pop(0)
            # Pairs already known keep their kind (as setdefault would).
            kinds.update(
                {
                    (first, later): "state"
                    for i, first in enumerate(served)
                    for later in served[i + 1 :]
                    if (first, later) not in kinds
                }
            )
        return kinds

    def label(self, name: str, clock: Optional[int] = None) -> str:
        """A timeline as a reader knows it: the job it ran, or the worker and its job."""
        return describe(self.trace, name, clock)

    def reach(self, sources: list[tuple[str, int]]) -> "Reach":
        """Earliest reached clock per timeline, with what is needed to explain each.

        ``sources`` are (timeline, clock) points; the reach of each includes its own timeline
        from that clock on and, through messages sent at or after it, everything downstream.
        """
        graph = self.graph
        graph.add_node(SUPER_SOURCE)
        direct: dict[str, int] = {}
        entry: dict[int, int] = {}
        entry_why: dict[int, str] = {}
        for index, (name, clock) in enumerate(sources):
            line = self.timelines.get(name)
            if line is None:
                continue
            if clock < direct.get(name, clock + 1):
                direct[name] = clock
            node = line.segment(clock)
            last_node = line.base + len(line.starts) - 1
            targets = [node + 1] if node < last_node and graph.has_edge(node, node + 1) else []
            sends = line.sends[bisect.bisect_left(line.sends, (clock, -1)) :]
            end = line.starts[node - line.base + 1] if node < last_node else None
            for send_clock, target in sends:
                if end is not None and send_clock >= end:
                    break
                targets.append(target)
                why = self.edge_why.get((node, target))
                if why:
                    entry_why.setdefault(target, why)
            for target in targets:
                graph.add_edge(SUPER_SOURCE, target)
                entry.setdefault(target, index)
        try:
            preds = dict(nx.bfs_predecessors(graph, SUPER_SOURCE))
        finally:
            graph.remove_node(SUPER_SOURCE)
        reached = dict(direct)
        ranges: dict[str, list[tuple[int, Optional[int]]]] = {}
        for name, clock in sources:  # every source: a worker's requests are cut apart
            if name in self.timelines:
                ranges.setdefault(name, []).append((clock, self.timelines[name].until(clock)))
        owner, start = self.node_owner, self.node_start
        for node in preds:
            name = owner[node]
            clock = start[node]
            if clock < reached.get(name, clock + 1):
                reached[name] = clock
            ranges.setdefault(name, []).append((clock, self.timelines[name].until(clock)))
        return Reach(self, sources, direct, reached, preds, entry, entry_why, ranges)


@dataclass
class Reach:
    """The result of :meth:`Order.reach`."""

    order: Order
    sources: list[tuple[str, int]]
    direct: dict[str, int]
    reached: dict[str, int]
    """Timeline -> earliest clock from which it happens after a source."""
    preds: dict[int, int]
    entry: dict[int, int]
    """First node after the super-source -> index of the source point that led there."""
    entry_why: dict[int, str]
    ranges: dict[str, list[tuple[int, Optional[int]]]] = field(default_factory=dict)
    """Timeline -> the clock ranges [from, until) reached (until None: to its end)."""

    def chain(self, name: str, clock: int) -> tuple[Optional[int], list[str]]:
        """(source index, steps) of the causal chain bringing a source to ``name`` at ``clock``."""
        order = self.order
        line = order.timelines[name]
        for index, c, until in self._sources_of().get(name, ()):
            if c <= clock and (until is None or clock < until):
                return index, []
        entry, steps = self._walk(line.segment(clock))
        return entry, list(steps)

    def _sources_of(self) -> dict[str, list[tuple[int, int, Optional[int]]]]:
        """Timeline -> its source points as (index, clock, first cut after it), in source
        order; built once (a query asks for a chain per impacted timeline)."""
        by_name = self.__dict__.get("_by_name")
        if by_name is None:
            by_name = {}
            timelines = self.order.timelines
            for index, (n, c) in enumerate(self.sources):
                line = timelines.get(n)
                if line is not None:
                    by_name.setdefault(n, []).append((index, c, line.until(c)))
            self.__dict__["_by_name"] = by_name
        return by_name

    def _walk(self, node: int) -> tuple[Optional[int], tuple[str, ...]]:
        """(entry source index, steps source first) of the path from the super-source to
        ``node`` in the BFS tree; memoised per node, so that the chains of a query cost the
        size of the tree, not the sum of its path lengths."""
        memo: dict[int, tuple[Optional[int], tuple[str, ...]]] = self.__dict__.setdefault(
            "_walks", {}
        )
        preds, why_of = self.preds, self.order.edge_why
        path: list[int] = []
        found: tuple[Optional[int], tuple[str, ...]]
        while True:
            if node in memo:
                found = memo[node]
                break
            if node not in preds:
                found = (None, ())
                break
            prev = preds[node]
            if prev == SUPER_SOURCE:
                entry_why = self.entry_why
                found = (self.entry.get(node), (entry_why[node],) if node in entry_why else ())
                memo[node] = found
                break
            path.append(node)
            node = prev
        index, steps = found
        for node in reversed(path):
            why = why_of.get((preds[node], node))
            if why:
                steps = (*steps, why)
            memo[node] = (index, steps)
        return index, steps


def describe(trace: Trace, name: str, clock: Optional[int] = None) -> str:
    """A timeline named for a reader: ``job RULE[outputs]``, ``worker W (serving JOB)``."""
    if name.startswith("job:"):
        key, _, half = name[4:].rpartition("#")
        return f"job {key} ({'its end' if half == 'end' else 'its start'})"
    if name.startswith("state:"):
        return f"the carried state of {describe(trace, name[6:])}"
    proc = trace.processes.get(name)
    if proc is None:
        return name
    if proc.job:
        return f"job {proc.job}"
    if proc.role in ("dag", "snakemake"):
        return "Snakemake's own process"
    if proc.role == "worker":
        who = f"worker {proc.worker_id or name}"
        if clock is not None:
            served = _last_request(proc, clock)
            if served:
                return f"{who} (serving {served})"
        return who
    return name


def _last_request(proc: "Process", clock: int) -> Optional[str]:
    """The job of the last receipt with a job at or before ``clock``, in ``proc.recvs``
    order (sorted by clock), else None; by bisection over an index built once per process
    (rebuilt if ``recvs`` grew)."""
    cached = proc.__dict__.get("_requests_index")
    if cached is None or cached[0] != len(proc.recvs):
        served = [c for c in proc.recvs if c.job]
        times = [c.clock for c in served]
        ordered = all(a <= b for a, b in zip(times, times[1:], strict=False))
        cached = (len(proc.recvs), times, [c.job or "" for c in served], ordered)
        proc.__dict__["_requests_index"] = cached
    clocks: list[int] = cached[1]
    jobs: list[str] = cached[2]
    if not cached[3]:  # not sorted by clock (a hand-built process): the plain scan
        found = [job for c, job in zip(clocks, jobs, strict=True) if c <= clock]
        return found[-1] if found else None
    i = bisect.bisect_right(clocks, clock)
    return jobs[i - 1] if i else None


def _read_at(proc: "Process", path: str, since: int) -> Optional[int]:
    """The first logged read of ``path`` by ``proc`` at or after ``since`` (a worker logs one
    per request), else its first read at all."""
    cached = proc.__dict__.get("_reads_index")
    if cached is None or cached[0] != len(proc.reads):
        by_path: dict[str, list[int]] = {}
        for p, c in proc.reads:
            by_path.setdefault(p, []).append(c)
        for times in by_path.values():
            times.sort()
        cached = (len(proc.reads), by_path)
        proc.__dict__["_reads_index"] = cached
    clocks: Optional[list[int]] = cached[1].get(path)
    if clocks:
        i = bisect.bisect_left(clocks, since)
        if i < len(clocks):
            return clocks[i]
    return proc.opens.get(path)


def _serving(proc: "Process", clock: int) -> Optional[str]:
    """The job a process was running at ``clock`` (its own, or a worker's current request)."""
    if proc.job:
        return proc.job
    return _last_request(proc, clock)


def _last_clock_for(proc: "Process", job: Optional[str]) -> int:
    """The last clock at which ``proc`` served ``job`` (a worker's reply for it), else its
    last clock at all."""
    if job and proc.role == "worker":
        replies = [c.clock for c in proc.sends if c.job == job]
        if replies:
            return max(replies)
    return proc.last_clock


class FileIndex:
    """Which jobs' outputs a read depends on: the exact file, a directory output holding it,
    or, for a listing (a path ending in ``/``), every output inside the folder and a
    directory output holding the folder."""

    def __init__(self, jobs: "Iterable[Job]") -> None:
        self.exact: dict[str, Job] = {}
        self.inside: dict[str, list[Job]] = {}
        for job in jobs:
            for path, _ in job.outputs:
                clean = _clean(path)
                self.exact[clean] = job
                parts = clean.split("/")
                for i in range(len(parts)):
                    folder = "/".join(parts[:i])
                    found = self.inside.setdefault(folder, [])
                    if not found or found[-1] is not job:
                        found.append(job)

    def producers(self, path: str) -> list[Job]:
        listing = path.endswith("/")
        clean = "" if path in ("./", "/") else _clean(path)
        found: list[Job] = []
        job = self.exact.get(clean)
        if job is not None:
            found.append(job)
        if listing or not found:  # a folder listed, or a declared folder input
            found.extend(j for j in self.inside.get(clean, ()) if j not in found)
        parts = clean.split("/") if clean else []
        for i in range(len(parts) - 1, 0, -1):  # directory outputs holding it
            holder = self.exact.get("/".join(parts[:i]))
            if holder is not None and holder not in found:
                found.append(holder)
        return found


def _inside(path: str, folder: str) -> bool:
    """Is ``path`` inside ``folder`` ("" is the workflow directory)?"""
    return not folder or path.startswith(folder + "/")


def _clean(path: str) -> str:
    """A relative path as the logs compare them: no ``./``, no trailing ``/``."""
    path = path.replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path.rstrip("/")


@gc_paused()
def build_order(trace: Trace) -> Order:
    """Build the partial order: messages, file write -> read, job start and end edges."""
    timelines: dict[str, Timeline] = {}
    hubs = {name for name, p in trace.processes.items() if p.role in HUB_ROLES}
    procs = {name: p for name, p in trace.processes.items() if name not in hubs}
    jobs = dict(trace.jobs)
    # Jobs seen only by tracers (no logger log): known by key, files unknown.
    for proc in procs.values():
        keys = {proc.job} | {c.job for c in proc.recvs} | {c.job for c in proc.sends}
        for key in keys:
            if key and key not in jobs:
                rule = key.split("[", 1)[0]
                jobs[key] = Job(key, rule, key)
    edges: list[tuple[str, int, str, int, str]] = []
    """(from timeline, clock, to timeline, clock, why)."""
    executor: dict[str, list[tuple[str, int]]] = {}
    kinds: dict[tuple[str, str], str] = {}

    def label(name: str, clock: Optional[int] = None) -> str:
        return describe(trace, name, clock)

    # Messages between traced processes: matched by id; those to or from a hub: rewired.
    received: dict[str, tuple[str, int]] = {}
    for name, proc in procs.items():
        for c in proc.recvs:
            received[c.message] = (name, c.clock)
    sent = {c.message for p in procs.values() for c in p.sends}
    lost = [c for h in hubs for c in trace.processes[h].sends if c.message not in received]
    if lost:
        trace.warnings.append(
            f"{len(lost)} messages sent by the sticky manager were never logged as received "
            "(a worker was killed or its trace is missing); their jobs count as untraced"
        )
    for name, proc in procs.items():
        for c in proc.sends:
            target = received.get(c.message)
            if target is not None:
                why = f"{label(name, c.clock)} sent message {c.message} to {label(*target)}"
                edges.append((name, c.clock, target[0], target[1], why))
                ends = (_serving(proc, c.clock), _serving(procs[target[0]], target[1]))
                if ends[0] and ends[1] and ends[0] != ends[1]:
                    kinds.setdefault((ends[0], ends[1]), "message")
            elif c.job:
                why = f"{label(name, c.clock)} finished job {c.job}"
                edges.append((name, c.clock, f"job:{c.job}#end", 0, why))
        for c in proc.recvs:
            if c.job and c.message not in sent:
                why = f"job {c.job} started on {label(name)}"
                edges.append((f"job:{c.job}#start", 0, name, c.clock, why))
                executor.setdefault(c.job, []).append((name, c.clock))
        if proc.job:
            executor.setdefault(proc.job, []).append((name, 0))
            edges.append((f"job:{proc.job}#start", 0, name, 0, f"job {proc.job} started"))
            edges.append((name, proc.last_clock, f"job:{proc.job}#end", 0, f"job {proc.job} ended"))

    # A sticky worker's carried state: a timeline of its own, fed by the requests that changed
    # it (evidence logged by the worker), feeding every later request. Requests that provably
    # left the state unchanged do not pass a change on to the next one.
    cuts: dict[str, list[int]] = {}
    for name, proc in procs.items():
        if proc.role != "worker" or not proc.states:
            continue
        notes: dict[str, list[StateNote]] = {}
        for note in proc.states:
            notes.setdefault(note.job, []).append(note)
        replies = {c.job: c.clock for c in proc.sends if c.job}
        requests = [c for c in proc.recvs if c.job]
        cuts[name] = sorted(c.clock for c in requests[1:])
        state = f"state:{name}"
        timelines[state] = Timeline(state, "state")
        who = label(name)
        served: list[str] = []
        for c in requests:
            jkey = c.job or ""
            if served:
                why = f"{who}'s state carried the change to job {jkey}"
                edges.append((state, c.clock, name, c.clock, why))
                for earlier in served:
                    kinds.setdefault((earlier, jkey), "state")
            # Each write feeds the state from its clock on; without evidence, the request's
            # end counts as one (it may have changed the state anywhere).
            found = notes.get(jkey) or [
                StateNote(jkey, replies.get(jkey, c.clock), None, "no evidence logged")
            ]
            for note in found:
                if note.written is not False:
                    why = f"job {jkey} changed {who}'s state ({note.evidence})"
                    edges.append((name, note.clock, state, note.clock, why))
            served.append(jkey)

    # Snakemake's own process: what it computed for a job (input functions, params callables,
    # the code they call) feeds that job's start. Contexts of jobs that never ran (candidates,
    # up-to-date jobs) lead nowhere.
    # With state evidence (logged per context), a context does not pass a change on to the
    # next one by program order: only through the state timeline, from the computations that
    # changed the workflow's state (the Snakefile's top level, a helper that caches).
    for name, proc in procs.items():
        if proc.role != "dag" or not proc.states or not proc.contexts:
            continue
        spans = sorted((a, b) for _, a, b, _, _ in proc.contexts)
        open_until = -1
        starts: list[int] = []
        for a, b in spans:
            if a > open_until:  # no other context open (threads): a clean cut
                starts.append(a)
            open_until = max(open_until, b)
        cuts[name] = starts
        state = f"state:{name}"
        timelines[state] = Timeline(state, "state")
        for a in starts:
            edges.append((state, a, name, a, "the workflow's state in Snakemake's process"))
        for note in proc.states:
            if note.written is not False:
                why = f"Snakemake's process: {note.evidence}"
                edges.append((name, note.clock, state, note.clock, why))
    for name, proc in procs.items():
        by_state = name in cuts and proc.role == "dag"
        for key, _, end, feed, to_end in proc.contexts:
            if key not in jobs:
                continue
            if by_state:
                feed = end  # the state at the context's start reaches it there
            if to_end:
                why = f"the run: code of {key} ran in {name}"
                edges.append((name, feed, f"job:{key}#end", 0, why))
            else:
                why = f"workflow code in {name} computed the input/params of {key}"
                edges.append((name, feed, f"job:{key}#start", 0, why))

    # Files: the producer's end feeds the reader at its first read, or the reading job's start.
    # By containment: a file under a directory output, a listing of a folder that holds
    # outputs (a checkpoint's shards, a glob) reach back to the jobs that wrote them.
    index = FileIndex(jobs.values())
    for job in jobs.values():
        for path, _ in job.inputs:
            for producer in index.producers(path):
                if producer is job:
                    continue
                kinds[(producer.key, job.key)] = "file"
                why = f"file {path} written by {producer.key}, read by {job.key}"
                readers = [(p, _read_at(procs[p], path, c)) for p, c in executor.get(job.key, [])]
                exact = [(p, c) for p, c in readers if c is not None]
                if exact:
                    for p, clock in exact:
                        edges.append((f"job:{producer.key}#end", 0, p, clock, why))
                else:
                    edges.append((f"job:{producer.key}#end", 0, f"job:{job.key}#start", 0, why))
    # An input function decides which jobs produce a job's inputs: a change reaching it may
    # add, drop or replace those jobs (a sample sheet's selection), so it reaches them.
    for name, proc in procs.items():
        for key, clock in proc.input_contexts:
            chooser = jobs.get(key)
            if chooser is None:
                continue
            for path, _ in chooser.inputs:
                for producer in index.producers(path):
                    if producer is not chooser:
                        why = f"the input function of {key} chose {producer.key} (for {path})"
                        edges.append((name, clock, f"job:{producer.key}#end", 0, why))
    # Reads the jobs did not declare (a folder listed, a file found by a glob): each traced
    # read of another job's output is an edge from that job's end, at the read.
    linked: set[tuple[str, str, int]] = set()
    for name, proc in procs.items():
        for path, clock in proc.reads:
            holders = index.producers(path)
            if not holders:
                continue
            reader = _serving(proc, clock)
            for producer in holders:
                if producer.key == reader or (producer.key, name, clock) in linked:
                    continue
                linked.add((producer.key, name, clock))
                if reader:
                    kinds.setdefault((producer.key, reader), "file")
                what = "listed" if path.endswith("/") else "read"
                why = f"{path} {what} by {label(name, clock)} holds output of {producer.key}"
                edges.append((f"job:{producer.key}#end", 0, name, clock, why))

    # Files written without being declared (a cache, a side file, an onstart: handler's):
    # each later read of one (or a listing of its folder) by another process is an edge from
    # the writing job's end (a process serving no job: from its write).
    written: dict[str, list[tuple[str, int]]] = {}
    for name, proc in procs.items():
        for path, clock in proc.writes:
            written.setdefault(_clean(path), []).append((name, clock))
    if written:
        for name, proc in procs.items():
            for path, clock in proc.reads:
                clean = "" if path in ("./", "/") else _clean(path)
                if path.endswith("/"):
                    hits = [w for p, ws in written.items() if _inside(p, clean) for w in ws]
                else:
                    hits = list(written.get(clean, ()))
                reader = _serving(proc, clock)
                for writer, wrote in hits:
                    wproc = procs[writer]
                    wjob = _serving(wproc, wrote)
                    if writer == name and wrote >= clock:
                        continue  # read before its own write: nothing passed
                    if writer != name and wjob and wjob == reader:
                        continue  # one job's own processes: its program order and ends
                    # (within one process, across the requests or contexts that cut it apart)
                    why = f"{path} written by {label(writer, wrote)}, read by {label(name, clock)}"
                    if wjob and wjob in jobs:
                        edges.append((f"job:{wjob}#end", 0, name, clock, why))
                        if reader:
                            kinds.setdefault((wjob, reader), "file")
                    else:
                        edges.append((writer, wrote, name, clock, why))

    # Child processes (forked, spawned, a job's subprocess): started after the parent's spawn
    # point (unknown: the parent's last clock for that job, which over-approximates).
    for name, proc in procs.items():
        parent = procs.get(proc.parent or "")
        if parent is None:
            continue
        spawned = proc.parent_clock
        if spawned is None:
            spawned = _last_clock_for(parent, proc.job)
        why = f"{label(proc.parent or '', spawned)} started process {name}"
        edges.append((proc.parent or "", spawned, name, 0, why))

    for name, proc in procs.items():
        timelines[name] = Timeline(name, "process", cuts=cuts.get(name, []))
        proc.arrays()  # columnar function spans, built once for every query
    for key in jobs:
        timelines[f"job:{key}#start"] = Timeline(f"job:{key}#start", "job-start")
        timelines[f"job:{key}#end"] = Timeline(f"job:{key}#end", "job-end")
    dropped = 0
    kept: list[tuple[str, int, str, int, str]] = []
    for edge in edges:
        if edge[0] in timelines and edge[2] in timelines:
            kept.append(edge)
            timelines[edge[2]].starts.append(edge[3])
        else:
            dropped += 1
    if dropped:
        trace.warnings.append(f"{dropped} edges to processes or jobs without logs were dropped")

    node_owner: list[str] = []
    node_start: list[int] = []
    graph = nx.DiGraph()
    program: list[tuple[int, int]] = []
    for line in timelines.values():
        line.starts = sorted(set(line.starts) | set(line.cuts))
        line.base = len(node_owner)
        node_owner.extend([line.name] * len(line.starts))
        node_start.extend(line.starts)
        cut = set(line.cuts)
        program.extend(
            (line.base + i, line.base + i + 1)
            for i in range(len(line.starts) - 1)
            if line.starts[i + 1] not in cut
        )
    graph.add_nodes_from(range(len(node_owner)))
    graph.add_edges_from(program)
    edge_why: dict[tuple[int, int], str] = {}
    cross: list[tuple[int, int]] = []
    for src, s_clock, dst, d_clock, why in kept:
        u = timelines[src].segment(s_clock)
        v = timelines[dst].segment(d_clock)
        timelines[src].sends.append((s_clock, v))
        cross.append((u, v))
        edge_why.setdefault((u, v), why)
    graph.add_edges_from(cross)
    # A job without a traced executor: its start leads to its end directly.
    for key in jobs:
        if key not in executor:
            u = timelines[f"job:{key}#start"].base
            v = timelines[f"job:{key}#end"].base
            graph.add_edge(u, v)
            timelines[f"job:{key}#start"].sends.append((0, v))
            edge_why[(u, v)] = f"job {key} ran (untraced)"
    for line in timelines.values():
        line.sends.sort()
    trace.jobs.update({k: j for k, j in jobs.items() if k not in trace.jobs})
    # Jobs served one after another by a worker without state evidence: state carries
    # (their pairs are made when Order.edge_kind is first read).
    carried = [
        [c.job for c in proc.recvs if c.job]
        for name, proc in procs.items()
        if proc.role == "worker" and name not in cuts
    ]
    return Order(
        trace, graph, timelines, node_owner, node_start, edge_why, executor, kinds, carried
    )
