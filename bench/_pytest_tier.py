"""A pytest run as a child process, for bench/unit_tier.py and bench/property_counts.py: its
wall and CPU seconds, its summary counts and, with hypothesis' statistics, the examples each
property test ran."""

import os
import re
import resource
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# "12 passed, 1 failed, 51 deselected, 2 skipped in 3.41s" (pytest -q's last line).
_SUMMARY = re.compile(r"(\d+) (passed|failed|errors?|skipped|deselected|xfailed|xpassed)")
# One test's block of --hypothesis-show-statistics: its id, then its phases.
_TEST = re.compile(r"^(tests/\S+::\S+):$", re.M)
_EXAMPLES = re.compile(r"- (\d+) passing examples?, (\d+) failing examples?")
_STOPPED = re.compile(r"Stopped because settings\.max_examples=(\d+)")


@dataclass
class TierRun:
    """One finished pytest run."""

    profile: str
    wall_s: float
    cpu_s: float  # the child's user + sys seconds
    returncode: int
    counts: dict[str, int]  # outcome -> number of tests ("passed", "failed", ...)
    examples: dict[str, int] = field(default_factory=dict)  # test id -> examples run
    max_examples: dict[str, int] = field(default_factory=dict)  # test id -> its settings' count
    tail: str = ""

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and self.counts.get("passed", 0) > 0


def summary_counts(output: str) -> dict[str, int]:
    """The outcome counts of pytest's summary line (the last line that has any)."""
    for line in reversed(output.strip().splitlines()):
        found = _SUMMARY.findall(line)
        if found and " in " in line:
            counts = {("errors" if k.startswith("error") else k): int(n) for n, k in found}
            return counts
    return {}


def hypothesis_statistics(output: str) -> tuple[dict[str, int], dict[str, int]]:
    """Per property test: the examples it ran (passing + failing, every phase) and the
    ``max_examples`` it stopped at, from ``--hypothesis-show-statistics``."""
    ran: dict[str, int] = {}
    stopped: dict[str, int] = {}
    heads = list(_TEST.finditer(output))
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(output)
        block = output[head.end() : end]
        ran[head[1]] = sum(int(p) + int(f) for p, f in _EXAMPLES.findall(block))
        limit = _STOPPED.search(block)
        if limit:
            stopped[head[1]] = int(limit[1])
    return ran, stopped


def bytecode_env(cache: "Path | None") -> dict[str, str]:
    """The environment of a run whose bytecode (Python's, and pytest's rewritten test
    modules) is cached under ``cache``, as on a developer's machine after a first run; with
    ``cache`` None, one that caches nothing and compiles every module of this checkout and
    every assertion-rewritten module again (PYTHONDONTWRITEBYTECODE=1)."""
    env = dict(os.environ)
    if cache is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env.pop("PYTHONPYCACHEPREFIX", None)
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(cache)
    return env


def finish(name: str, result: dict, failing: list["TierRun"]) -> None:
    """Write ``bench/results/NAME.json``; with failing runs, show the first one's output and
    exit 1."""
    from _common import write_result

    print(f"wrote {write_result(name, result)}")
    if failing:
        print(failing[0].tail, file=sys.stderr)
        sys.exit(1)


def run_tier(
    args: list[str],
    profile: str,
    statistics: bool = False,
    env: "dict[str, str] | None" = None,
) -> TierRun:
    """``python -m pytest -q ARGS`` from the checkout's root under HYPOTHESIS_PROFILE=profile."""
    cmd = [sys.executable, "-m", "pytest", "-q", *args]
    if statistics:
        cmd.append("--hypothesis-show-statistics")
    env = {**(os.environ if env is None else env), "HYPOTHESIS_PROFILE": profile}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    output = proc.stdout + proc.stderr
    ran, stopped = hypothesis_statistics(output) if statistics else ({}, {})
    return TierRun(
        profile=profile,
        wall_s=round(wall, 2),
        cpu_s=round(cpu, 2),
        returncode=proc.returncode,
        counts=summary_counts(output),
        examples=ran,
        max_examples=stopped,
        tail=output[-3000:],
    )
