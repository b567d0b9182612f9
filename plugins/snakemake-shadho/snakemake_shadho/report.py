"""The search report: best configuration, per-sub-space and per-class tables (pandas) and
convergence plots (matplotlib), written atomically beside a Markdown summary."""

import io
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ._spec import SearchSpec
from ._store import write_json, write_text_atomic


def records_frame(history: Sequence[Mapping[str, Any]]) -> Any:
    """The trial records as a pandas DataFrame, in completion order."""
    import pandas as pd

    columns = [
        "trial",
        "round",
        "subspace",
        "hw_class",
        "status",
        "loss",
        "duration_s",
        "started",
        "finished",
        "error",
    ]
    frame = pd.DataFrame([{k: r.get(k) for k in columns} for r in history], columns=columns)
    frame["loss"] = pd.to_numeric(frame["loss"])
    return frame


def subspace_table(spec: SearchSpec, history: Sequence[Mapping[str, Any]]) -> Any:
    """One row per sub-space: trials, failures, best and median loss, mean duration, classes."""
    import pandas as pd

    from ._complexity import log_complexity

    frame = records_frame(history)
    rows = []
    for name, sub in spec.subspaces.items():
        mine = frame[frame["subspace"] == name]
        ok = mine[mine["status"] == "ok"]
        rows.append(
            {
                "subspace": name,
                "log_complexity": round(log_complexity(sub.space), 3),
                "trials": len(mine),
                "failed": int((mine["status"] != "ok").sum()),
                "best_loss": ok["loss"].min() if len(ok) else None,
                "median_loss": ok["loss"].median() if len(ok) else None,
                "mean_duration_s": mine["duration_s"].mean() if len(mine) else None,
                "classes": ",".join(sorted(set(mine["hw_class"]))),
            }
        )
    return pd.DataFrame(rows)


def class_table(spec: SearchSpec, history: Sequence[Mapping[str, Any]]) -> Any:
    """One row per hardware class: trials, busy seconds, utilisation, declared and measured
    speed, sub-spaces run.

    Utilisation is busy time over capacity: the class's summed trial durations over its worker
    count times the search's wall time (first trial start to last trial end), so idle workers
    waiting at a round's barrier, or for bookkeeping, count against it."""
    import pandas as pd

    from ._rounds import measure_speeds
    from ._speeds import class_speed

    frame = records_frame(history)
    estimates = measure_speeds(spec, history)
    wall = None
    if len(frame) and frame["started"].notna().all() and frame["finished"].notna().all():
        wall = float(frame["finished"].max() - frame["started"].min())
    rows = []
    for cls in spec.classes.values():
        mine = frame[frame["hw_class"] == cls.name]
        busy = float(mine["duration_s"].sum())
        rows.append(
            {
                "hw_class": cls.name,
                "count": cls.count,
                "cpus": cls.cpus,
                "speed": cls.speed,
                "measured_speed": round(class_speed(estimates, cls), 4),
                "trials": len(mine),
                "busy_s": busy,
                "utilisation": busy / (cls.count * wall) if wall else None,
                "mean_duration_s": mine["duration_s"].mean() if len(mine) else None,
                "best_loss": mine["loss"].min() if len(mine) else None,
                "subspaces": ",".join(sorted(set(mine["subspace"]))),
            }
        )
    return pd.DataFrame(rows)


def speed_table(spec: SearchSpec, history: Sequence[Mapping[str, Any]]) -> Any:
    """One row per (class, sub-space): declared speed (the prior), measured speed, trials."""
    import pandas as pd

    from ._rounds import measure_speeds
    from ._speeds import speeds_table

    return pd.DataFrame(
        speeds_table(measure_speeds(spec, history)),
        columns=["hw_class", "subspace", "declared", "measured", "trials"],
    )


def best_trial(history: Sequence[Mapping[str, Any]]) -> "dict[str, Any] | None":
    """The successful record with the lowest loss (earliest on ties)."""
    ok = [r for r in history if r.get("status") == "ok"]
    return dict(min(ok, key=lambda r: float(r["loss"]))) if ok else None


def plot_convergence(history: Sequence[Mapping[str, Any]], path: "str | os.PathLike[str]") -> None:
    """Best loss so far against trials and against wall time, with every trial's loss by
    sub-space."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    frame = records_frame(history).sort_values("finished", kind="stable").reset_index(drop=True)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    best = frame["loss"].where(frame["status"] == "ok").cummin()
    left.step(range(1, len(frame) + 1), best, where="post", color="black", label="best so far")
    for name, group in frame[frame["status"] == "ok"].groupby("subspace"):
        left.scatter(group.index + 1, group["loss"], s=12, label=name, alpha=0.7)
    left.set(xlabel="trials finished", ylabel="loss", yscale="log", title="Convergence")
    left.legend(fontsize=7)
    if len(frame) and frame["finished"].notna().all():
        t = frame["finished"] - frame["started"].min()
        right.step(t, best, where="post", color="black")
        right.set(
            xlabel="wall time since the first trial started (s)",
            ylabel="best loss",
            yscale="log",
            title="Best loss over time",
        )
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    plt.close(fig)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(path).with_name(f".{Path(path).name}.tmp")
    tmp.write_bytes(buffer.getvalue())
    os.replace(tmp, path)


def write_report(
    spec: SearchSpec,
    history: Sequence[Mapping[str, Any]],
    plans: Sequence[Mapping[str, Any]],
    markdown_path: "str | os.PathLike[str]",
) -> dict[str, Any]:
    """Write ``best.json``, ``subspaces.csv``, ``classes.csv``, ``convergence.png`` and the
    Markdown report into the report's folder; return the best record (or None)."""
    folder = Path(markdown_path).parent
    best = best_trial(history)
    subspaces = subspace_table(spec, history)
    classes = class_table(spec, history)
    speeds = speed_table(spec, history)
    write_json(folder / "best.json", {"best": best, "trials": len(history)})
    write_text_atomic(folder / "subspaces.csv", subspaces.to_csv(index=False))
    write_text_atomic(folder / "classes.csv", classes.to_csv(index=False))
    write_text_atomic(folder / "speeds.csv", speeds.to_csv(index=False))
    plot_convergence(history, folder / "convergence.png")
    failed = [r for r in history if r.get("status") != "ok"]
    lines = [
        "# SHADHO search report",
        "",
        f"{len(history)} trials in {len(plans)} rounds, {len(failed)} failed.",
        "",
        "## Best configuration",
        "",
    ]
    if best is None:
        lines.append("No trial succeeded.")
    else:
        lines += [
            f"- loss: {best['loss']:.6g} (trial `{best['trial']}`, sub-space "
            f"`{best['subspace']}`, class `{best['hw_class']}`)",
            f"- parameters: `{json.dumps(best['params'], sort_keys=True)}`",
        ]
    lines += [
        "",
        "## Sub-spaces",
        "",
        _markdown(subspaces),
        "",
        "## Hardware classes",
        "",
        _markdown(classes),
        "",
        "Utilisation: busy time over workers x wall time (first trial start to last end).",
        "",
        "## Measured speeds",
        "",
        "Declared speeds are priors; measured ones come from the trials' durations "
        "(relative speeds only, through sub-spaces run on several classes).",
        "",
        _markdown(speeds),
        "",
        *_slower_lines(spec, history),
        "## Rankings by round",
        "",
    ]
    for plan in plans:
        serving = "; ".join(f"{c}: {', '.join(s)}" for c, s in plan["serving"].items())
        lines.append(f"- round {plan['round']}: {' > '.join(plan['ranking']['order'])} ({serving})")
    if failed:
        lines += ["", "## Failed trials", ""]
        lines += [f"- `{r['trial']}`: {str(r.get('error')).splitlines()[0]}" for r in failed]
    lines += ["", "![convergence](convergence.png)", ""]
    write_text_atomic(markdown_path, "\n".join(lines))
    return {"best": best}


def _slower_lines(spec: SearchSpec, history: Sequence[Mapping[str, Any]]) -> list[str]:
    from ._rounds import measure_speeds
    from ._speeds import slower_than_declared

    slow = slower_than_declared(measure_speeds(spec, history), spec.classes)
    return [
        f"**Slower than declared:** class `{name}` runs at less than half the speed its "
        "declaration claims relative to the other classes; the planner uses the measured speed."
        for name in slow
    ] + ([""] if slow else [])


def _markdown(frame: Any) -> str:
    header = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "---|" * len(frame.columns)
    rows = [
        "| " + " | ".join(_cell(v) for v in row) + " |" for row in frame.itertuples(index=False)
    ]
    return "\n".join([header, rule, *rows])


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return "" if value != value else f"{value:.4g}"
    return "" if value is None else str(value)
