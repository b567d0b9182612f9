"""Human-readable output: a terminal table, and a Markdown report with a rendered job graph.

Outputs appear atomically (written to a temporary file, then renamed), so a report that a
workflow step or a browser picks up is never half-written.
"""

import os
import re
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Literal, Optional

from ._order import Order
from ._query import Impact, ImpactResult


def _short(chain: tuple[str, ...], width: int = 90) -> str:
    """A causal chain on one line: source, the number of hops, and the last hop."""
    if not chain:
        return ""
    if len(chain) <= 2:
        text = " -> ".join(chain)
    else:
        text = f"{chain[0]} -> ({len(chain) - 2} more) -> {chain[-1]}"
    return text if len(text) <= width else text[: width - 3] + "..."


SHOWN = 8
"""Names, chain shapes and warnings a summary lists before "and N more"."""


def _rule(job: str) -> str:
    return job.split("[", 1)[0]


_JOB = re.compile(r"\b([A-Za-z_][\w.]*)\[[^\]]*\]")
_WORKER = re.compile(r"\bworker \S+")


def _shape(item: Impact) -> str:
    """A chain with its job names replaced by their rules (``verify[...]``) and workers by
    "a worker": the same path taken by many jobs reads as one line."""
    rule = _rule(item.name)
    if not item.chain:
        return f"(the source itself) -> {rule}"
    source = _WORKER.sub("a worker", _JOB.sub(r"\1[...]", item.chain[0]))
    return f"{source} -> {len(item.chain) - 1} hop(s) -> {rule}"


def summary_data(result: ImpactResult) -> dict[str, object]:
    """What the summary shows, as data (``--json`` without ``--explain full``)."""
    by_rule: dict[str, int] = {}
    for job in result.jobs:
        by_rule[_rule(job.name)] = by_rule.get(_rule(job.name), 0) + 1
    shapes: dict[str, int] = {}
    for job in result.jobs:
        shapes[_shape(job)] = shapes.get(_shape(job), 0) + 1
    top = sorted(shapes.items(), key=lambda kv: (-kv[1], kv[0]))
    return {
        "counts": {
            "functions": len(result.functions),
            "jobs": len(result.jobs),
            "outputs": len(result.outputs),
            "sources": len(result.sources),
            "conservative": len(result.conservative),
        },
        "jobs_by_rule": dict(sorted(by_rule.items(), key=lambda kv: (-kv[1], kv[0]))),
        "top_chains": [{"chain": shape, "jobs": n} for shape, n in top[:SHOWN]],
    }


def _some(names: list[str]) -> str:
    shown = ", ".join(names[:SHOWN])
    return shown + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")


def summary(result: ImpactResult, warnings: Optional[list[str]] = None) -> str:
    """The answer in a screenful, however many jobs it holds: counts, impacted jobs by rule,
    the most common chain shapes, a few names, the warnings; ``--explain full`` for all."""
    data = summary_data(result)
    counts = data["counts"]
    assert isinstance(counts, dict)
    lines = [f"Impact of {', '.join(map(str, result.changes))}"]
    lines.append(
        f"  {counts['functions']} functions, {counts['jobs']} jobs, {counts['outputs']} "
        f"outputs; entered at {counts['sources']} source points"
    )
    by_rule = data["jobs_by_rule"]
    assert isinstance(by_rule, dict)
    lines.append("")
    if not by_rule:
        lines.append("JOBS: none")
    else:
        width = max(4, *(len(r) for r in by_rule))
        lines.append(f"{'RULE':<{width}}  JOBS  FOR EXAMPLE")
        for rule, n in list(by_rule.items())[: SHOWN * 2]:
            names = [j.name for j in result.jobs if _rule(j.name) == rule]
            lines.append(f"{rule:<{width}}  {n:>4}  {_some(names[:2])}")
        if len(by_rule) > SHOWN * 2:
            lines.append(f"... and {len(by_rule) - SHOWN * 2} more rules")
        if result.conservative:
            lines.append(
                f"  ({len(result.conservative)} of them included without proof: see WARNINGS)"
            )
    top = data["top_chains"]
    assert isinstance(top, list)
    if top:
        lines += ["", "MOST COMMON CHAINS (source -> hops -> impacted rule):"]
        lines += [f"  {t['jobs']:>4} job(s): {t['chain']}" for t in top]
    if result.functions:
        lines += ["", f"FUNCTIONS: {_some(sorted({f.name for f in result.functions}))}"]
    if result.outputs:
        lines += ["", f"OUTPUTS: {_some([o.name for o in result.outputs])}"]
    every = result.warnings if warnings is None else warnings
    if every:
        lines += ["", f"WARNINGS ({len(every)}):"] + [f"  - {w}" for w in every[:SHOWN]]
        if len(every) > SHOWN:
            lines.append(f"  ... and {len(every) - SHOWN} more")
    if result.justified:
        lines += ["", "WHY NOTHING MORE:"] + [f"  - {j}" for j in result.justified]
    lines += ["", "Every function, job, output and causal chain: --explain full"]
    return "\n".join(lines) + "\n"


def table(result: ImpactResult, explain: bool = False, warnings: Optional[list[str]] = None) -> str:
    """The impact set as aligned plain-text tables (functions, jobs, outputs), then the
    warnings (blind spots the answer covers conservatively) and what justifies an empty part."""
    lines = [f"Impact of {', '.join(map(str, result.changes))}"]
    lines.append(
        f"  {len(result.functions)} functions, {len(result.jobs)} jobs, "
        f"{len(result.outputs)} outputs; entered at {len(result.sources)} source points"
    )
    sections: list[tuple[str, list[Impact], str]] = [
        ("FUNCTION", result.functions, "RAN FOR"),
        ("JOB", result.jobs, "RULE"),
        ("OUTPUT", result.outputs, "WRITTEN BY"),
    ]
    for title, items, context in sections:
        lines.append("")
        if not items:
            lines.append(f"{title}: none")
            continue
        w1 = max(len(title), *(len(i.name) for i in items))
        w2 = max(len(context), *(len(i.context) for i in items))
        lines.append(f"{title:<{w1}}  {context:<{w2}}  WHY")
        for item in items:
            lines.append(f"{item.name:<{w1}}  {item.context:<{w2}}  {_short(item.chain)}")
            if explain:
                lines.extend(f"{'':<{w1}}    {n}. {step}" for n, step in enumerate(item.chain, 1))
    every = result.warnings if warnings is None else warnings
    if every:
        lines += ["", f"WARNINGS ({len(every)}):"] + [f"  - {w}" for w in every]
    if result.justified:
        lines += ["", "WHY NOTHING MORE:"] + [f"  - {j}" for j in result.justified]
    return "\n".join(lines) + "\n"


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


EDGE_STYLES: dict[str, tuple[str, Literal["solid", "dashed", "dotted"], str]] = {
    "file": ("#1f77b4", "solid", "file written -> read"),
    "state": ("#ff7f0e", "dashed", "worker state carried to a later job"),
    "message": ("#2ca02c", "dotted", "message between processes"),
}


def job_edges(order: Order) -> dict[tuple[str, str], str]:
    """Every job -> job edge a change can cross, with its kind (``file``, ``state``, ...)."""
    jobs = order.trace.jobs
    return {e: k for e, k in order.edge_kind.items() if e[0] in jobs and e[1] in jobs}


def render_graph(order: Order, result: ImpactResult, path: Path) -> bool:
    """Draw the job graph with every edge kind (files, worker state, messages; a legend says
    which is which), impacted jobs in red; False without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import networkx as nx
        from matplotlib.lines import Line2D
    except ImportError:
        return False
    jobs = order.trace.jobs
    graph = nx.DiGraph()
    for key, job in jobs.items():
        if job.outputs:
            graph.add_node(key)
    kinds = {e: k for e, k in job_edges(order).items() if e[0] in graph and e[1] in graph}
    for (a, b), kind in kinds.items():
        graph.add_edge(a, b, kind=kind)
    if not graph:
        return False
    impacted = {i.name for i in result.jobs}
    sources: set[Optional[str]] = {
        n.split("#", 1)[0].removeprefix("job:") for n, _, _ in result.sources
    }
    sources |= {
        order.trace.processes[n].job for n, _, _ in result.sources if n in order.trace.processes
    }
    layout = nx.DiGraph((a, b) for (a, b), k in kinds.items() if k == "file")
    layout.add_nodes_from(graph)
    for layer, nodes in enumerate(nx.topological_generations(layout)):
        for node in nodes:
            graph.nodes[node]["layer"] = layer
    pos = nx.multipartite_layout(graph, subset_key="layer")
    colors = ["#d62728" if n in impacted else "#c7c7c7" for n in graph]
    edge = ["#222222" if n in sources else "#ffffff" for n in graph]
    size = max(6.0, 1.2 * len(graph) ** 0.5 * 2)
    fig, ax = plt.subplots(figsize=(size, size * 0.6))
    handles = []
    for kind, (color, style, text) in EDGE_STYLES.items():
        chosen = [e for e, k in kinds.items() if k == kind]
        if not chosen:
            continue
        nx.draw_networkx_edges(
            graph,
            pos,
            edgelist=chosen,
            ax=ax,
            alpha=0.6,
            arrows=True,
            edge_color=color,
            style=style,
            connectionstyle="arc3,rad=0.15" if kind != "file" else "arc3",
        )
        handles.append(Line2D([0], [0], color=color, linestyle=style, label=text))
    nx.draw_networkx_nodes(
        graph, pos, ax=ax, node_color=colors, edgecolors=edge, linewidths=2, node_size=300
    )
    labels = {n: n if len(n) < 28 else n[:25] + "..." for n in graph}
    nx.draw_networkx_labels(graph, pos, labels, ax=ax, font_size=7)
    if handles:
        ax.legend(handles=handles, loc="lower right", fontsize=7)
    ax.set_title(f"Impact of {', '.join(map(str, result.changes))} (red: impacted)")
    ax.axis("off")
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".png")
    os.close(fd)
    try:
        fig.savefig(tmp, dpi=110, bbox_inches="tight")
        os.replace(tmp, path)
    finally:
        plt.close(fig)
        if os.path.exists(tmp):
            os.unlink(tmp)
    return True


def markdown(order: Order, result: ImpactResult, path: Path) -> Path:
    """Write a Markdown report (and ``<name>.png`` beside it); return the report's path."""
    picture = path.with_suffix(".png")
    path.parent.mkdir(parents=True, exist_ok=True)
    drawn = render_graph(order, result, picture)
    out = [f"# Impact of {', '.join(f'`{c}`' for c in result.changes)}", ""]
    out.append(
        f"{len(result.functions)} functions, {len(result.jobs)} jobs and "
        f"{len(result.outputs)} outputs are impacted. Analysed {order.trace.events} events "
        f"from {len(order.trace.processes)} processes and {len(order.trace.jobs)} jobs."
    )
    out.append("")
    if drawn:
        out += [f"![job graph]({picture.name})", ""]
    out += ["## Where the change enters", ""]
    out += [f"- {what} (clock {clock})" for _, clock, what in result.sources] or ["- nowhere"]
    for title, items, context in (
        ("Jobs", result.jobs, "rule"),
        ("Outputs", result.outputs, "written by"),
        ("Functions", result.functions, "ran for"),
    ):
        out += ["", f"## {title}", ""]
        if not items:
            out.append("None.")
            continue
        out += [f"| {title[:-1].lower()} | {context} | causal chain |", "|---|---|---|"]
        out += [f"| `{i.name}` | `{i.context}` | {' &rarr; '.join(_md(i.chain))} |" for i in items]
    warnings = [*order.trace.warnings, *result.warnings]
    if warnings:
        out += ["", "## Warnings", ""] + [f"- {w}" for w in warnings]
    if result.justified:
        out += ["", "## Why nothing more", ""] + [f"- {j}" for j in result.justified]
    _atomic_write(path, ("\n".join(out) + "\n").encode())
    return path


def _md(steps: Iterable[str]) -> list[str]:
    return [s.replace("|", "\\|") for s in steps]
