"""Shared test helpers: real Snakemake runs in temporary copies of test workflows."""

import gc
import gzip
import importlib.util
import json
import math
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import settings

WORKFLOWS = Path(__file__).parent / "integration" / "workflows"
REPO = Path(__file__).resolve().parents[1]
# The import roots of this checkout's distributions (plugins/<distribution>/<package>), for
# the PYTHONPATH of child processes that must import this checkout's code.
PLUGIN_ROOTS = [str(p.parent) for p in sorted((REPO / "plugins").glob("*/pyproject.toml"))]
PLUGINS_PATH = os.pathsep.join(PLUGIN_ROOTS)


# Hypothesis profiles. A property test declares its full example count through examples(),
#     @settings(max_examples=examples(300), deadline=None)
# and the loaded profile scales it by the profile's max_examples over FULL_EXAMPLES (hypothesis'
# own default): "full" runs the declared counts (bench/property_counts.py runs the unit tier so);
# "unit", the default, a tenth of them, at least MIN_EXAMPLES (or the declared count when that
# is smaller), so that the unit tier stays fast. Each run draws new examples (no derandomize,
# in CI too, where hypothesis would otherwise load its derandomized "ci" profile), so the runs
# add up; a failure prints the @reproduce_failure line that replays it (print_blob).
# HYPOTHESIS_PROFILE=full, or pytest's --hypothesis-profile full, selects the full counts;
# tests/unit/test_gates.py refuses a unit test's literal max_examples.
FULL_EXAMPLES = 100
MIN_EXAMPLES = 3
HYPOTHESIS_PROFILES = {"unit": 10, "full": FULL_EXAMPLES}
DEFAULT_PROFILE = "unit"
for _name, _count in HYPOTHESIS_PROFILES.items():
    # Parent: hypothesis' "default" profile, not whichever is loaded (in CI, "ci").
    settings.register_profile(
        _name,
        settings.get_profile("default"),
        max_examples=_count,
        deadline=None,
        derandomize=False,
        print_blob=True,
    )


def hypothesis_profile_named(environ: Mapping[str, str]) -> str:
    """The profile that HYPOTHESIS_PROFILE names (unit when unset); a usage error naming the
    choices for any other name."""
    name = environ.get("HYPOTHESIS_PROFILE") or DEFAULT_PROFILE
    if name not in HYPOTHESIS_PROFILES:
        choices = ", ".join(HYPOTHESIS_PROFILES)
        raise pytest.UsageError(
            f"HYPOTHESIS_PROFILE={name}: no such hypothesis profile; use one of {choices} "
            f"(unset: {DEFAULT_PROFILE})"
        )
    return name


def pytest_configure(config: pytest.Config) -> None:
    # Before any test module is imported (examples() runs when a module is); hypothesis' own
    # plugin then loads --hypothesis-profile, when given, over this one.
    settings.load_profile(hypothesis_profile_named(os.environ))


# hypothesis' st.text() draws from the characters UTF-8 can encode. Without its cache (a fresh
# clone has no .hypothesis/) it finds them by encoding each of the 1,114,112 code points one by
# one: about 2.5 s of whichever test first draws text. UTF-8 encodes every code point but the
# surrogates (U+D800 to U+DFFF), so that table is written where hypothesis caches it, in its
# own format; one it cannot read it computes again, as before. The same characters are drawn
# either way: tests/unit/test_gates.py checks the table against the codec and against what
# hypothesis uses.
UTF8_INTERVALS = ((0, 0xD7FF), (0xE000, sys.maxunicode))


def hypothesis_utf8_tables() -> dict[Path, object]:
    """Where hypothesis caches the table of characters UTF-8 encodes, and what it stores
    there: up to 6.15x ``codec-utf-8`` holds the intervals; later versions read
    ``codec-v2-utf-8``, the intervals and those that do not round-trip (none for UTF-8)."""
    from hypothesis.internal.charmap import charmap_file

    return {
        Path(charmap_file("codec-utf-8")): UTF8_INTERVALS,
        Path(charmap_file("codec-v2-utf-8")): [UTF8_INTERVALS, []],
    }


@pytest.hookimpl(trylast=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    # trylast: after hypothesis' plugin has ended its initialization (touching its storage
    # before that is a HypothesisSideeffectWarning).
    for path, table in hypothesis_utf8_tables().items():
        if path.exists():
            continue
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with gzip.GzipFile(tmp, "wb", mtime=1) as f:
                f.write(json.dumps(table).encode())
            os.replace(tmp, path)
        except OSError:
            # A read-only checkout: hypothesis computes the table itself, as it always did.
            tmp.unlink(missing_ok=True)


def pytest_collection_finish(session: pytest.Session) -> None:
    """Everything alive once the tests are collected (the modules under test and their
    libraries: hyperopt, scipy, pandas...) lives until the session ends: move it out of the
    garbage collector's view. Every full collection during the tests, and the ones pytest
    runs at the end to find unraisable exceptions, then walk only what the tests allocate
    (about 3 s of the unit tier's 20 went to walking these objects again and again)."""
    gc.freeze()


def scaled_examples(full: int, profile_examples: int) -> int:
    """The example count of a property test whose full count is ``full`` under a profile of
    ``profile_examples``: ``full`` at FULL_EXAMPLES, a tenth of it (at least MIN_EXAMPLES, or
    ``full`` when smaller) at a tenth of FULL_EXAMPLES."""
    scaled = math.ceil(full * profile_examples / FULL_EXAMPLES)
    return max(min(full, MIN_EXAMPLES), scaled)


def examples(full: int) -> int:
    """``full`` scaled to the loaded profile (see scaled_examples)."""
    return scaled_examples(full, settings.default.max_examples)


def slurm_cluster_answers() -> bool:
    """Whether the local Slurm cluster (tests/slurm/start-cluster.sh) has a usable node."""
    if shutil.which("sinfo") is None:
        return False
    proc = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True)
    return proc.returncode == 0 and any(s in proc.stdout for s in ("idle", "mix", "alloc"))


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Tests marked ``slurm`` need the cluster: skipped without it, failed without it when
    STICKY_REQUIRE_SLURM=1 (CI), so that they never silently skip there."""
    if item.get_closest_marker("slurm") is None or slurm_cluster_answers():
        return
    if os.environ.get("STICKY_REQUIRE_SLURM") == "1":
        pytest.fail("no Slurm cluster answers: run tests/slurm/start-cluster.sh")
    pytest.skip("no Slurm cluster (start one with tests/slurm/start-cluster.sh)")


_TRACER_ENVIRONMENT = ("DISTEA_JOB", "DISTEA_PARENT", "DISTEA_PARENT_CLOCK", "PYTHONPATH")


@pytest.fixture(autouse=True)
def tracer_environment_restored() -> Any:
    """A DISTEA trace started inside the test process names its job and the start-up hook
    in os.environ (for the programs it starts): put back after each test, so that later
    tests' subprocesses do not start as that job's processes."""
    before = {key: os.environ.get(key) for key in _TRACER_ENVIRONMENT}
    yield
    for key, value in before.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


# --sticky-backend slurm for the pilot tests: cluster execution, as under --executor slurm
# (--jobs bounds the jobs); one pilot at a time (the test cluster has 2 CPUs); fast status checks.
PILOT_ARGS = [
    "--sticky-backend",
    "slurm",
    "--jobs",
    "2",
    "--sticky-max-pilots",
    "1",
    "--sticky-slurm-options",
    "init-seconds-before-status-checks=1",
    "--seconds-between-status-checks",
    "1",
]


def plain_rules_local(wd: Path) -> Path:
    """Declare every rule of ``wd``'s Snakefile that does not opt in (no ``sticky=``) a
    localrule: tests about pilots then run those jobs here, not as Slurm jobs of the hybrid
    backend (each a Snakemake start on the 2-CPU test cluster)."""
    snakefile = wd / "Snakefile"
    text = snakefile.read_text()
    blocks = re.split(r"^rule (\w+):", text, flags=re.M)[1:]
    plain = [n for n, body in zip(blocks[::2], blocks[1::2], strict=True) if "sticky=" not in body]
    if plain:
        snakefile.write_text(text + f"\n\nlocalrules: {', '.join(plain)}\n")
    return wd


def pilots(workdir: Path, timeout: float = 30.0) -> dict[str, tuple[str, str]]:
    """job id -> (partition, state) of the newest run's pilots, from Slurm accounting.

    Accounting lags behind the jobs a little: wait until every pilot the run started is
    recorded in a final state."""
    run_dir = sorted((workdir / ".snakemake" / "sticky").iterdir())[-1]
    started = sum(
        1
        for line in (run_dir / "metrics.jsonl").read_text().splitlines()
        if '"worker_started"' in line
    )
    deadline = time.monotonic() + timeout
    while True:
        out = subprocess.run(
            [
                "sacct",
                "-X",
                "-n",
                "-P",
                f"--name=sticky-{run_dir.name}",
                "-o",
                "JobID,Partition,State",
            ],
            capture_output=True,
            text=True,
            check=True,
            timeout=30,
        ).stdout
        jobs = {r[0]: (r[1], r[2]) for r in (line.split("|") for line in out.splitlines() if line)}
        final = all(
            state.split()[0] not in ("PENDING", "RUNNING", "COMPLETING")
            for _, state in jobs.values()
        )
        if len(jobs) == started and final:
            return jobs
        if time.monotonic() > deadline:
            raise AssertionError(
                f"timed out after {timeout:g} s waiting for sacct to record the {started} "
                f"pilots of run {run_dir.name} in a final state; it lists {jobs}"
            )
        time.sleep(0.25)


def pythons_with_monitoring() -> list[str]:
    """The Python 3.12+ interpreters on this machine (``sys.monitoring``), one per version,
    found on PATH or under ~/.pyenv (pyenv shims may not run)."""
    candidates = [shutil.which(f"python3.{minor}") for minor in (12, 13, 14)]
    candidates += sorted(map(str, Path.home().glob(".pyenv/versions/3.1[2-9]*/bin/python3")))
    found: dict[str, str] = {}
    for candidate in filter(None, candidates):
        probe = [candidate, "-c", "import sys; sys.monitoring; print(sys.version.split()[0])"]
        proc = subprocess.run(probe, capture_output=True, text=True)
        if proc.returncode == 0:
            found.setdefault(proc.stdout.strip(), candidate)
    return list(found.values())


def bench_module(name: str) -> ModuleType:
    """Import ``bench/NAME`` (a package or a module) without putting ``bench/`` on sys.path,
    where ``bench/distea.py`` and ``bench/nbrewind.py`` would shadow the packages."""
    if name in sys.modules:
        return sys.modules[name]
    folder = REPO / "bench" / name
    if folder.is_dir():
        spec = importlib.util.spec_from_file_location(
            name, folder / "__init__.py", submodule_search_locations=[str(folder)]
        )
    else:
        spec = importlib.util.spec_from_file_location(name, folder.with_suffix(".py"))
    assert spec is not None and spec.loader is not None, f"no bench module {name}"
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# The test workflows' own files (Snakemake's upstream ones include a script named
# test_explicit_import.py) are workflow inputs, not test modules.
collect_ignore_glob = ["integration/workflows/*"]


@dataclass
class SnakemakeRun:
    """One finished ``snakemake`` command, with what it printed and what it left behind."""

    workdir: Path
    returncode: int
    output: str

    def metrics(self) -> list[dict[str, Any]]:
        """The records of the newest sticky metrics log of this working directory."""
        logs = sorted((self.workdir / ".snakemake" / "sticky").glob("*/metrics.jsonl"))
        assert logs, f"no sticky metrics under {self.workdir}/.snakemake/sticky"
        return [json.loads(line) for line in logs[-1].read_text().splitlines()]

    def events(self, name: str) -> list[dict[str, Any]]:
        return [r for r in self.metrics() if r["event"] == name]

    def read(self, path: str) -> str:
        return (self.workdir / path).read_text()


def snakemake_command(*args: str, executor: str = "sticky", cores: int = 2) -> list[str]:
    return [
        sys.executable,
        "-m",
        "snakemake",
        "--executor",
        executor,
        "--cores",
        str(cores),
        "--nocolor",
        "--latency-wait",
        "3",
        *args,
    ]


@pytest.fixture
def workflow(tmp_path: Path) -> Callable[[str], Path]:
    """Copy a test workflow from tests/integration/workflows into a fresh directory."""

    def copy(name: str, into: str = "wf") -> Path:
        target = tmp_path / into
        shutil.copytree(WORKFLOWS / name, target)
        return target

    return copy


@pytest.fixture
def run_snakemake() -> Callable[..., SnakemakeRun]:
    def run(
        workdir: Path,
        *args: str,
        executor: str = "sticky",
        cores: int = 2,
        env: "dict[str, str] | None" = None,
        timeout: float = 240,
    ) -> SnakemakeRun:
        proc = subprocess.run(
            snakemake_command(*args, executor=executor, cores=cores),
            cwd=workdir,
            capture_output=True,
            text=True,
            timeout=timeout,
            env={**os.environ, **(env or {})},
        )
        return SnakemakeRun(workdir, proc.returncode, proc.stdout + proc.stderr)

    return run


class BackgroundRun:
    """A ``snakemake`` command running in the background, for tests that interrupt it."""

    def __init__(self, workdir: Path, cmd: list[str]) -> None:
        self.workdir = workdir
        self.proc = subprocess.Popen(
            cmd, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )

    def events(self, name: str) -> list[dict[str, Any]]:
        """Metrics records so far (none before the first worker starts)."""
        logs = sorted((self.workdir / ".snakemake" / "sticky").glob("*/metrics.jsonl"))
        if not logs:
            return []
        lines = logs[-1].read_text().splitlines()
        return [r for r in map(json.loads, lines) if r["event"] == name]

    def finish(self, timeout: float = 180) -> SnakemakeRun:
        out, _ = self.proc.communicate(timeout=timeout)
        return SnakemakeRun(self.workdir, self.proc.returncode, out)


@pytest.fixture
def start_snakemake() -> Callable[..., BackgroundRun]:
    started: list[BackgroundRun] = []

    def start(workdir: Path, *args: str, cores: int = 2) -> BackgroundRun:
        run = BackgroundRun(workdir, snakemake_command(*args, cores=cores))
        started.append(run)
        return run

    yield start
    for run in started:
        if run.proc.poll() is None:
            run.proc.kill()
        if run.proc.stdout is not None and not run.proc.stdout.closed:
            run.proc.communicate()  # reaps it and closes its pipe (a test that never finished)


def poll_until(predicate: Callable[[], Any], timeout: float = 60.0, what: str = "") -> Any:
    """Poll with a deadline instead of sleeping a fixed time; return the first truthy value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out after {timeout} s waiting for {what or predicate}")


@pytest.fixture
def poll() -> Callable[..., Any]:
    return poll_until


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead for our purposes.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.fixture
def alive() -> Callable[[int], bool]:
    return pid_alive


@pytest.fixture(scope="session")
def docs_sandbox(tmp_path_factory):
    """Runs documented blocks as written (tests/docblocks.py), each at most once per session:
    the blocks test and the packaging test share the quickstart's install."""
    from tests.docblocks import Sandbox

    sandbox = Sandbox(tmp_path_factory.mktemp("docs"))
    yield sandbox
    # The virtual environments are most of the space (torch alone is over a gigabyte); the
    # copies, with what the blocks left there, stay for inspection.
    for venv in sandbox.root.glob("venv*"):
        shutil.rmtree(venv, ignore_errors=True)
