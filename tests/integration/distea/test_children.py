"""Issue 28, for real: jobs behind a checkpoint's directory output and a folder listing, and
code that runs only in child processes (a fork Pool closed and joined, a spawn process pool,
a subprocess, a shell command running Python) are impacted, proven by the logs, without a
warning; each process left a complete trace."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from distea import Change, analyse
from tests.conftest import PLUGINS_PATH

WORKFLOW = Path(__file__).resolve().parent / "children"


@pytest.fixture(scope="module")
def traced(tmp_path_factory: pytest.TempPathFactory) -> Path:
    workdir = tmp_path_factory.mktemp("children") / "wf"
    shutil.copytree(WORKFLOW, workdir)
    traces = workdir / "traces"
    paths = [PLUGINS_PATH, str(workdir), os.environ.get("PYTHONPATH", "")]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(p for p in paths if p),
        "DISTEA_TRACE": str(traces),
    }
    cmd = [
        sys.executable, "-m", "snakemake", "--executor", "local", "-j", "1", "--nocolor",
        "--logger", "distea", "--logger-distea-dir", str(traces),
    ]  # fmt: skip
    proc = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return traces


EXPECTED = {
    # only in the fork Pool's children (pool.close(); pool.join())
    "func:pkg.work.square": {"pool[pool.txt]"},
    # only in a spawn ProcessPoolExecutor's process
    "func:pkg.work.spawned": {"spawnjob[spawn.txt]"},
    # only in `python -m pkg.tool`: started by a script's subprocess.run and by a shell: rule
    "func:pkg.work.tool_value": {"sub[sub.txt]", "shelljob[shell.txt]"},
    # the checkpoint's directory output: the jobs after it read files inside it, or list it
    "func:pkg.work.shard_count": {
        "split[shards]", "per_shard[per/0.txt]", "per_shard[per/1.txt]", "agg[agg.txt]",
        "listed[listed.txt]",
    },
}  # fmt: skip


@pytest.mark.integration
@pytest.mark.parametrize("change", sorted(EXPECTED))
def test_code_in_children_and_behind_folders_impacts_exactly_its_jobs(traced, change):
    result = analyse(traced, [Change.parse(change)])
    assert {j.name for j in result.jobs} == EXPECTED[change]
    assert result.warnings == []
    # the cp/cat jobs after the checkpoint run no Python: reached through files, not proven
    # by a trace of their own, and no blind spot either
    assert not {k for k in result.conservative if not k.startswith(("per_shard", "agg"))}


@pytest.mark.integration
def test_every_child_process_left_a_complete_trace_naming_its_job_and_parent(traced):
    heads = []
    for path in traced.glob("*.jsonl"):
        lines = path.read_text().splitlines()
        head = json.loads(lines[0])
        if head.get("role") in ("child", "script"):
            assert json.loads(lines[-1])["k"] == "end", path.name  # flushed at exit
            heads.append(head)
    forked = [h for h in heads if h.get("forked")]
    assert len(forked) == 2 and {h["job"] for h in forked} == {"pool[pool.txt]"}
    assert all(isinstance(h["parent_clock"], int) for h in forked)
    spawned = [h for h in heads if any("multiprocessing" in a for a in h.get("argv", []))]
    assert spawned and {h["job"] for h in spawned} == {"spawnjob[spawn.txt]"}
    assert all(h["parent"] and h["parent_clock"] is None for h in spawned)  # unknown: its end
    scripts = [h for h in heads if h["role"] == "script" and h not in spawned]
    assert scripts and all(h["parent"].startswith("dag:") for h in scripts)
    tools = [h for h in heads if "pkg.tool" in h.get("argv", [])]
    assert {h["job"] for h in tools} == {"sub[sub.txt]", "shelljob[shell.txt]"}
