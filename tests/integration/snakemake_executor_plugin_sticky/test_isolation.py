"""Differential suite (issue 12): hostile scripts give byte-identical outputs and logs under
``--executor local`` and under sticky, in both isolation modes, with every job of several rules
on one worker (so anything one job leaves behind reaches the next).

The workflow is ``tests/integration/workflows/sticky_hostile``: every script first writes what
it sees (``scripts/probe.py``: environment, modules, sys state, streams, logging, warnings,
signals, RNG, locale, shell settings, preamble globals), then changes the process the way real
scripts do. The fixed run covers every rule twice; the generated runs (hypothesis) draw
the jobs, their order, their values and how scripts end.
"""

import json
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, example, given, settings
from hypothesis import strategies as st

from tests.conftest import WORKFLOWS, SnakemakeRun, examples, snakemake_command

pytestmark = pytest.mark.integration

HOSTILE = [
    "modules_a", "modules_b", "env", "patch", "logs", "stdio", "fds", "chdir", "syspath",
    "signals", "warns", "rng", "atexit_threads", "large", "exits", "pickles", "limits",
    "shell_exec",
]  # fmt: skip
ENDINGS = ["KeyboardInterrupt", "exit-3", "exit-message", "raise", "exit-0"]
FAILING = {"KeyboardInterrupt", "exit-3", "exit-message", "raise"}


def run_hostile(root: Path, name: str, executor: str, jobs: list[dict[str, str]],
                template: str = "warm") -> SnakemakeRun:  # fmt: skip
    workdir = root / name
    shutil.copytree(WORKFLOWS / "sticky_hostile", workdir)
    (workdir / "jobs.json").write_text(json.dumps({"jobs": jobs}))
    args = ["--configfile", "jobs.json", "--config", f"template={template}", "--keep-going"]
    if executor == "sticky":
        args += ["--sticky-max-workers", "1"]  # every job on one worker
    proc = subprocess.run(
        snakemake_command(*args, executor=executor),
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=400,
    )
    return SnakemakeRun(workdir, proc.returncode, proc.stdout + proc.stderr)


def tree(run: SnakemakeRun) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for folder in ("out", "logs"):
        for path in sorted((run.workdir / folder).rglob("*")):
            if path.is_file():
                files[str(path.relative_to(run.workdir))] = path.read_bytes()
    return files


def assert_same_as_local(local: SnakemakeRun, sticky: SnakemakeRun, jobs: list[dict[str, str]]):
    failing = sum(1 for j in jobs if j["rule"] == "fails" and j["value"] in FAILING)
    assert local.returncode == (1 if failing else 0), local.output
    assert sticky.returncode == local.returncode, sticky.output
    expected, got = tree(local), tree(sticky)
    assert sorted(got) == sorted(expected)
    for path in expected:
        assert got[path] == expected[path], f"{path} differs from --executor local"
    invocations = sticky.events("invocation")
    assert len(invocations) == len(jobs)
    assert len({r["worker"] for r in invocations}) == 1, "all jobs should share one worker"
    assert sum(not r["ok"] for r in invocations) == failing
    assert not sticky.events("worker_lost") and not sticky.events("requeued"), sticky.output
    assert f"sticky: {len(jobs)} invocations ({failing} failed) on 1 worker(s)" in sticky.output


ALL_JOBS = [{"rule": name, "value": f"{name}-{i}"} for i in range(2) for name in HOSTILE]


@pytest.fixture(scope="module")
def fixed_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, SnakemakeRun]:
    root = tmp_path_factory.mktemp("hostile")
    return {
        "local": run_hostile(root, "local", "local", ALL_JOBS),
        "direct": run_hostile(root, "direct", "sticky", ALL_JOBS, "warm"),
        "fork": run_hostile(root, "fork", "sticky", ALL_JOBS, "forked"),
    }


@pytest.mark.parametrize("mode", ["direct", "fork"])
def test_every_hostile_script_matches_local(fixed_runs, mode):
    """Module cache across rules (a/utils.py vs b/utils.py), env, monkeypatches,
    logging.basicConfig(filename=log), sys.stdout = sys.stderr = f, fds 1/2, chdir, sys.path,
    signals and timers, warnings, seeds, atexit and threads, large outputs, sys.exit(0),
    pickling __main__ classes, umask/recursion/locale, shell settings: two jobs of each
    rule, 36 on one worker, byte-identical to fresh processes."""
    assert_same_as_local(fixed_runs["local"], fixed_runs[mode], ALL_JOBS)
    a = fixed_runs[mode].read("out/modules_a/18.txt")
    b = fixed_runs[mode].read("out/modules_b/19.txt")
    assert "utils: a/utils.py 1 a" in a and "utils: b/utils.py 1 b" in b
    assert fixed_runs[mode].read("logs/logs/22.log") == (
        "INFO root job value logs-1\nWARNING hostile.child child of logs-1\n"
    )
    assert fixed_runs[mode].read("logs/stdio/23.log") == "to the log: stdio-1\nstderr too\n"


def test_direct_mode_warns_once_per_patching_job_and_fork_mode_needs_not(fixed_runs):
    """A monkeypatch of a module loaded before the script is put back, with one warning naming
    the job and the attribute; in fork mode there is nothing to put back."""
    direct = fixed_runs["direct"].output
    for k in (3, 21):
        assert (
            f"sticky: job of rule patch (k={k}), output out/patch/{k}.txt: the script rebound "
            "builtins.print, rebound json.dumps, added json.hostile_helper (monkeypatches"
        ) in direct
    assert direct.count("rebound json.dumps") == 2
    assert "monkeypatch" not in fixed_runs["fork"].output


jobs_strategy = st.lists(
    st.one_of(
        st.builds(
            lambda rule, value: {"rule": rule, "value": value},
            st.sampled_from(HOSTILE),
            st.text(alphabet="abcxyz019-", min_size=1, max_size=8),
        ),
        st.builds(lambda value: {"rule": "fails", "value": value}, st.sampled_from(ENDINGS)),
    ),
    min_size=4,
    max_size=10,
)


EVERY_ENDING = [
    {"rule": "fails", "value": "KeyboardInterrupt"},
    {"rule": "env", "value": "x"},
    {"rule": "fails", "value": "exit-3"},
    {"rule": "stdio", "value": "y"},
    {"rule": "fails", "value": "exit-message"},
    {"rule": "modules_b", "value": "z"},
    {"rule": "fails", "value": "raise"},
    {"rule": "fails", "value": "exit-0"},
    {"rule": "logs", "value": "w"},
]


# Each example is three real Snakemake runs (local, direct, fork): 3 generated mixes plus the
# explicit one in the default profile, 30 with HYPOTHESIS_PROFILE=full.
@settings(
    max_examples=examples(30),
    deadline=None,
    database=None,
    phases=[Phase.explicit, Phase.generate],  # no shrinking: each example is three real runs
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(jobs=jobs_strategy)
@example(jobs=EVERY_ENDING)
def test_generated_job_mixes_match_local_in_both_modes(jobs: list[dict[str, Any]]):
    """Generated mixes of hostile jobs, including scripts that raise KeyboardInterrupt, exit
    with a status or a message, or raise: every mode gives what fresh processes give, and a
    failing script fails its own job once, never the worker."""
    with tempfile.TemporaryDirectory(prefix="hostile-") as folder:
        root = Path(folder)
        local = run_hostile(root, "local", "local", jobs)
        for template in ("warm", "forked"):
            sticky = run_hostile(root, template, "sticky", jobs, template)
            assert_same_as_local(local, sticky, jobs)
            for job in jobs:
                if job["value"] == "KeyboardInterrupt":
                    assert "KeyboardInterrupt raised by the script" in sticky.output
                if job["value"] == "exit-message":
                    assert "script exited with status 1: bad input" in sticky.output
                if job["value"] == "exit-3":
                    assert "script exited with status 3" in sticky.output


def test_unknown_isolation_mode_stops_the_run_with_one_line(tmp_path):
    workdir = tmp_path / "bad"
    shutil.copytree(WORKFLOWS / "sticky_hostile", workdir)
    templates = workdir / "sticky_templates.py"
    text = templates.read_text()
    templates.write_text(
        text.replace('@template("forked")', '@template("forked", isolation="thread")')
    )
    proc = subprocess.run(
        snakemake_command("out/env/0.txt"), cwd=workdir, capture_output=True, text=True
    )
    assert proc.returncode != 0
    output = proc.stdout + proc.stderr
    assert "isolation= of template 'forked' is 'thread'; use one of 'fork', 'direct'" in output
    assert "Traceback" not in output
    assert not (workdir / "out").exists()


def test_a_child_the_script_forks_never_returns_to_the_worker(tmp_path):
    """In-process (a real Worker, no manager): os.fork() in a script, the child running off the
    end of the script exits as a fresh child would, instead of serving invocations."""
    import types

    import stickyinvoc._access as access
    from snakemake_executor_plugin_sticky._protocol import Invoke
    from snakemake_executor_plugin_sticky.worker import Worker

    class Conn:
        def send(self, message: object) -> None:
            pass

    (tmp_path / "sticky_templates.py").write_text(
        "from stickyinvoc import template\n@template('m')\ndef m():\n    return 1\n"
    )
    out = tmp_path / "forked.txt"
    source = (
        "import os\npid = os.fork()\n"
        f"with open({str(out)!r}, 'a') as f:\n"
        "    f.write('child\\n' if pid == 0 else 'parent\\n')\n"
        "if pid:\n    os.waitpid(pid, 0)\n"
    )
    smk = types.SimpleNamespace(rule="r", resources={"sticky": "m"}, output=[], log=[])
    worker = Worker(Conn(), "w")  # type: ignore[arg-type]
    access._bind_worker(worker.holder.lookup)
    try:
        for mode in ("direct", "fork"):
            inv = Invoke(
                1, "m", str(tmp_path / "sticky_templates.py"), str(tmp_path / "s.py"), source,
                str(tmp_path), smk, isolation=mode, workdir=str(tmp_path), searchpaths=[],
            )  # fmt: skip
            assert worker.run(inv).ok
            assert sorted(out.read_text().splitlines()) == ["child", "parent"]
            out.unlink()
    finally:
        access._bind_worker(None)
