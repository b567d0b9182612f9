"""DISTEA tracer cost: the 3.11 default (code-level instrumentation) against an untraced run.

``python bench/distea_tracer.py [--quick] [--baseline PLUGINS_DIR]`` prints the figures and
writes ``bench/results/distea_tracer.json``.

Two workloads, each a script that imports a helper module *before* tracing starts (so the
tracer has to instrument functions that already exist) and runs ``import distea.autotrace``:

* ``mandelbrot``: one traced call per pixel (~5 us of work each), the workload of
  ``bench/distea.py``'s overhead figure;
* ``dispatch``: ~1 us functions reached through a dispatch dict, ``functools.partial``, a
  decorator's closure and a callback list: the worst case for per-call cost, and the calls
  the former ``wrap`` tracer did not see at all;
* ``children``: a fork ``Pool(2)`` mapping a helper over N items (~0.3 ms each), then four
  ``python -m`` programs: every one of these processes is traced too (a start-up hook, an
  at-fork hook), the CPU of all of them counted.

Variants: untraced, the default tracer, ``settrace`` (sees every call, at 3.11's slow-path
price), and with ``--baseline DIR`` the default tracer of another checkout's
``plugins/snakemake-logger-plugin-distea`` (or ``plugins/`` before the split)
(e.g. ``main``'s ``wrap`` tracer). When a Python 3.12+ interpreter is found (on ``PATH`` or
under ``~/.pyenv/versions``), also that interpreter untraced and with its default
``sys.monitoring`` tracer (and the baseline's), its ratios taken against its own untraced
run. Measure: the child's CPU seconds (user+sys), which other load on a shared machine
disturbs far less than wall time; runs interleaved (ABAB...), median.
"""

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import ROOT, WORK, write_result  # noqa: E402

HERE = WORK / "distea_tracer"
# The import root of this checkout's distea (the distribution that holds it).
DISTEA_ROOT = ROOT / "plugins" / "snakemake-logger-plugin-distea"

MANDEL_HELPER = """
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
MANDEL_MAIN = """
import sys
import helper_mandelbrot as helper
import distea.autotrace  # noqa: F401

size = int(sys.argv[1])
print(sum(sum(helper.row(y, size, size, 200)) for y in range(size)))
"""
DISPATCH_HELPER = """
import functools


def f_range(xs):
    return max(xs) - min(xs)


def f_mean(xs):
    return sum(xs) / len(xs)


def scaled(xs, factor):
    return xs[0] * factor


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


@logged
def first(xs):
    return xs[0]


EXTRACTORS = {"range": f_range, "mean": f_mean, "half": functools.partial(scaled, factor=0.5)}
CALLBACKS = [first, f_mean]


def features(xs):
    out = [EXTRACTORS[k](xs) for k in ("range", "mean", "half")]
    return out + [cb(xs) for cb in CALLBACKS]
"""
DISPATCH_MAIN = """
import sys
import helper_dispatch as helper
import distea.autotrace  # noqa: F401

n = int(sys.argv[1])
xs = [1.0, 4.0, 2.0, 8.0]
print(sum(sum(helper.features(xs)) for _ in range(n)))
"""
CHILDREN_HELPER = """
def work(n):
    total = 0
    for i in range(n):
        total += i * i % 7
    return total


if __name__ == "__main__":
    import sys

    print(work(int(sys.argv[1])))
"""
CHILDREN_MAIN = """
import multiprocessing
import subprocess
import sys
import helper_children as helper
import distea.autotrace  # noqa: F401

n = int(sys.argv[1])
pool = multiprocessing.get_context("fork").Pool(2)
total = sum(pool.map(helper.work, [3000] * n))
pool.close()
pool.join()
for _ in range(4):
    command = [sys.executable, "-m", "helper_children", "30000"]
    total += int(subprocess.run(command, capture_output=True, text=True, check=True).stdout)
print(total)
"""
WORKLOADS = {
    "mandelbrot": (MANDEL_HELPER, MANDEL_MAIN, {"quick": "200", "full": "400"}),
    "dispatch": (DISPATCH_HELPER, DISPATCH_MAIN, {"quick": "60000", "full": "200000"}),
    # issue 28: every process a job starts is traced (fork Pool children, python -m programs)
    "children": (CHILDREN_HELPER, CHILDREN_MAIN, {"quick": "400", "full": "2000"}),
}


def _measure(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"benchmark step failed ({' '.join(cmd)}):\n{proc.stderr[-3000:]}")
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return cpu, wall, proc.stdout


def python_with_monitoring() -> Optional[str]:
    """A Python 3.12+ interpreter on this machine (``sys.monitoring``), if any."""
    candidates = [shutil.which(f"python3.{minor}") for minor in (12, 13, 14)]
    candidates += sorted(map(str, Path.home().glob(".pyenv/versions/3.1[2-9]*/bin/python3")))
    for candidate in filter(None, candidates):
        probe = [candidate, "-c", "import sys; sys.monitoring"]
        if subprocess.run(probe, capture_output=True).returncode == 0:
            return candidate
    return None


def _version(python: str) -> str:
    probe = [python, "-c", "import sys; print(sys.version.split()[0])"]
    return subprocess.run(probe, capture_output=True, text=True).stdout.strip()


def run(quick: bool, baseline: Optional[Path]) -> dict[str, Any]:
    shutil.rmtree(HERE, ignore_errors=True)
    HERE.mkdir(parents=True)
    reps = 3 if quick else 7
    # label -> (distea import root, trace mode (None: untraced), interpreter, untraced label)
    variants: dict[str, tuple[Path, Optional[str], str, str]] = {
        "untraced": (DISTEA_ROOT, None, sys.executable, "untraced"),
        "default (instrument)": (DISTEA_ROOT, "", sys.executable, "untraced"),
        "settrace": (DISTEA_ROOT, "settrace", sys.executable, "untraced"),
    }
    if baseline is not None:
        variants["baseline default"] = (baseline, "", sys.executable, "untraced")
    modern = python_with_monitoring()
    if modern is not None:
        untraced = "3.12+ untraced"
        variants[untraced] = (DISTEA_ROOT, None, modern, untraced)
        variants["3.12+ default (monitoring)"] = (DISTEA_ROOT, "", modern, untraced)
        if baseline is not None:
            variants["3.12+ baseline default"] = (baseline, "", modern, untraced)
    out: dict[str, Any] = {
        "python": sys.version.split()[0],
        "python_monitoring": _version(modern) if modern else None,
        "measure": "median over interleaved runs of the child's CPU seconds (user+sys); wall too",
        "reps": reps,
        "baseline_plugins": str(baseline) if baseline else None,
        "workloads": {},
    }
    for name, (helper, main, sizes) in WORKLOADS.items():
        (HERE / f"helper_{name}.py").write_text(helper)
        (HERE / f"{name}.py").write_text(main)
        size = sizes["quick" if quick else "full"]
        cpu: dict[str, list[float]] = {v: [] for v in variants}
        wall: dict[str, list[float]] = {v: [] for v in variants}
        answers: dict[str, set[str]] = {v: set() for v in variants}
        order = list(variants)
        for rep in range(reps):
            for label in order if rep % 2 == 0 else order[::-1]:
                plugins, mode, python, _ = variants[label]
                env = {**os.environ, "PYTHONPATH": f"{plugins}{os.pathsep}{HERE}"}
                for key in ("DISTEA_TRACE", "DISTEA_TRACE_MODE", "DISTEA_DIGESTS", "DISTEA_JOB"):
                    env.pop(key, None)
                if mode is not None:
                    traces = HERE / "traces" / label.replace(" ", "_")
                    shutil.rmtree(traces, ignore_errors=True)
                    env["DISTEA_TRACE"] = str(traces)
                    env["DISTEA_JOB"] = "bench[out.txt]"  # as a job's processes: children too
                    if mode:
                        env["DISTEA_TRACE_MODE"] = mode
                c, w, stdout = _measure([python, f"{name}.py", size], HERE, env)
                cpu[label].append(c)
                wall[label].append(w)
                answers[label].add(stdout.strip())
        if len({a for values in answers.values() for a in values}) != 1:
            sys.exit(f"{name}: traced and untraced runs printed different results: {answers}")
        rows: dict[str, Any] = {"size": size}
        for label in variants:
            base_label = variants[label][3]
            plain = statistics.median(cpu[base_label])
            plain_wall = statistics.median(wall[base_label])
            c, w = statistics.median(cpu[label]), statistics.median(wall[label])
            rows[label] = {
                "cpu_s": round(c, 3),
                "ratio": round(c / plain, 3),
                "wall_ratio": round(w / plain_wall, 3),
            }
            print(
                f"{name:10s} {label:26s} CPU {c:6.2f} s  {c / plain:5.3f}x"
                f"  (wall {w / plain_wall:5.3f}x)"
            )
        if "baseline default" in variants:
            base = statistics.median(cpu["baseline default"])
            rows["default_vs_baseline"] = round(
                statistics.median(cpu["default (instrument)"]) / base, 3
            )
            print(f"{name:10s} default / baseline default = {rows['default_vs_baseline']:.3f}x")
        if "3.12+ baseline default" in variants:
            base = statistics.median(cpu["3.12+ baseline default"])
            rows["monitoring_vs_baseline"] = round(
                statistics.median(cpu["3.12+ default (monitoring)"]) / base, 3
            )
            print(f"{name:10s} 3.12+ default / baseline = {rows['monitoring_vs_baseline']:.3f}x")
        out["workloads"][name] = rows
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, 3 runs each")
    parser.add_argument(
        "--baseline",
        type=Path,
        help="a plugins/ folder whose default tracer to compare with (e.g. main's)",
    )
    args = parser.parse_args()
    result = run(args.quick, args.baseline.resolve() if args.baseline else None)
    path = write_result("distea_tracer", {"quick": args.quick, **result})
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
