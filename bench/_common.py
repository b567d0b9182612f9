"""Helpers shared by the benchmarks: timing commands, copying workflows, writing results."""

import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Optional

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
WORK = ROOT / "bench" / "work"
# The import roots of this checkout's distributions (plugins/<distribution>/<package>).
PLUGIN_ROOTS = [str(p.parent) for p in sorted((ROOT / "plugins").glob("*/pyproject.toml"))]
PLUGINS_PATH = os.pathsep.join(PLUGIN_ROOTS)


def fresh_copy(source: Path, target: Path) -> Path:
    """Copy a workflow without its results and Snakemake state."""
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(
        source, target, ignore=shutil.ignore_patterns("results", ".snakemake", "__pycache__")
    )
    return target


def timed(cmd: list[str], cwd: Path, env: Optional[dict[str, str]] = None) -> float:
    """Run a command to completion; return its wall seconds; fail loudly on error."""
    start = time.perf_counter()
    proc = subprocess.run(
        cmd, cwd=cwd, capture_output=True, text=True, env={**os.environ, **(env or {})}
    )
    seconds = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(
            f"benchmark step failed ({' '.join(cmd)}):\n{proc.stdout[-3000:]}"
            f"\n{proc.stderr[-3000:]}"
        )
    return seconds


def snakemake(*args: str) -> list[str]:
    # Targets and --config lists come first: --quiet takes a list and would swallow them.
    return [sys.executable, "-m", "snakemake", *args, "--nocolor", "--quiet", "rules"]


def measured_commit() -> str:
    """The checkout's commit, with ``+dirty`` when tracked files differ from it ("" outside git)."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT, capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", "plugins"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        ).stdout.strip()
    except OSError:
        return ""
    return f"{head}+dirty" if head and dirty else head


def write_result(name: str, result: dict[str, Any], path: Optional[Path] = None) -> Path:
    """Write ``bench/results/NAME.json`` (or ``path``) with the date, the machine and the code.

    ``machine.load_average`` is the 1/5/15-minute load when the result is written (the 15-minute
    figure covers most of a benchmark's run: a shared machine's load is part of its figures);
    ``commit`` is the checkout measured (``+dirty``: its plugins had uncommitted changes).
    """
    RESULTS.mkdir(parents=True, exist_ok=True)
    result = {
        "benchmark": name,
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "commit": measured_commit(),
        "machine": {
            "cpus": os.cpu_count(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "load_average": [round(x, 2) for x in os.getloadavg()],
        },
        **result,
    }
    path = path or RESULTS / f"{name}.json"
    path.write_text(json.dumps(result, indent=2) + "\n")
    return path


# The no-op workflows of bench/invocation_overhead.py and bench/scale.py: N trivial jobs as
# sticky invocations, or as `run:` jobs (Snakemake's fastest path).
NOOP_STICKY = """
N = int(config["count"])
rule all:
    input: expand("out/{i}.txt", i=range(N))
rule noop:
    output: "out/{i}.txt"
    resources: sticky="noop"
    script: "noop.py"
"""
NOOP_THREADS = """
N = int(config["count"])
rule all:
    input: expand("out/{i}.txt", i=range(N))
rule noop:
    output: "out/{i}.txt"
    run:
        open(output[0], "w").close()
"""


def noop_workflow(wd: Path, snakefile: str, isolation: str = "direct") -> Path:
    """A fresh folder ``wd`` with a no-op workflow: the Snakefile, its script and a ``noop``
    template (in isolation mode ``isolation``)."""
    if wd.exists():
        shutil.rmtree(wd)
    wd.mkdir(parents=True)
    (wd / "Snakefile").write_text(snakefile)
    (wd / "noop.py").write_text('open(snakemake.output[0], "w").close()\n')
    (wd / "sticky_templates.py").write_text(
        "from stickyinvoc import template\n\n\n"
        f"@template('noop', isolation={isolation!r})\ndef noop():\n    return None\n"
    )
    return wd
