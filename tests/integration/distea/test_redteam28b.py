"""Issue 28's second red team, kept as tests: workflows a helper wrote from docs/distea.md
alone (``redteam28b/``), each change verified by that helper with a real re-run (outputs'
sha256 before and after). DISTEA's answer from the base run's logs must include every job the
change really altered (a conservative inclusion carries a warning naming the job).

First pass (commit e672260): 51 probes, 12 silent misses: a file a job writes without
declaring it; a new file in a listed folder, found by ``glob_wildcards`` or by
``os.path.exists``; state Snakemake's process keeps in a factory's closure, a class attribute
or a cache file; ``shadow:`` jobs; ``onstart:``; ``exec``/``runpy`` of a workflow file; a
``#!`` script with its own environment; sqlite3; a program like ``sort`` reading the file;
changes named as a source file, a bare function name, or a key read from the raw config file.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from distea import Change, analyse
from tests.conftest import PLUGINS_PATH

CASES = Path(__file__).resolve().parent / "redteam28b"

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

# change -> jobs the helper's re-run showed changed
EXPECTED = {
    "case1": {
        "func:wf.helper.vocab": {"b[out/b.txt]"},  # written undeclared by a, read by b
        "file:data/extra.txt": {"c[out/c.txt]"},  # os.path.exists of a file that was absent
        "file:data/ref.db": {"g[out/g.txt]"},  # sqlite3.connect
        "func:wf.helper.tool_fn": {"j[out/j.txt]"},  # a #! script with its own environment
        "config:thresh": {"f[out/f.txt]"},  # yaml.safe_load(open("config.yaml"))
    },
    "case2": {
        "file:data/table1.tsv": {"p1[out/p1_s1.txt]", "p1[out/p1_s2.txt]"},  # factory closure
        "file:data/table2.tsv": {"p2[out/p2_s1.txt]", "p2[out/p2_s2.txt]"},  # class attribute
        "file:data/table3.tsv": {"p3[out/p3_s1.txt]", "p3[out/p3_s2.txt]"},  # a cache file
        "func:wfh.util.h": {"sh[out/sh.txt]"},  # shadow: "minimal"
        "func:wfh.util.k": {"sh2[out/sh2.txt]"},  # shadow, python -m in shell:
    },
    "case3b": {
        "file:data/samples/c.txt": {
            "globnew[out/globnew.txt]", "rglob[out/rglob.txt]", "listdir[out/listdir.txt]",
        },  # a new file in listed folders
        "func:wf.snip.snip": {"execsnip[out/execsnip.txt]"},  # exec(open(...).read())
        "func:wf.snip2.snip2": {"runpath[out/runpath.txt]"},  # runpy.run_path
        "file:wf/snip.py": {"execsnip[out/execsnip.txt]"},
    },
    "case4b": {
        "file:data/in/s3.txt": {"summary[out/summary.txt]"},  # glob_wildcards finds it
        "file:data/opt_s2.txt": {"opt[out/opt_s2.txt]"},  # os.path.exists in an input function
    },
    "case5b": {
        "func:wfh.meta.prepare": {"usesmeta[out/usesmeta.txt]"},  # onstart: writes a file
        "file:data/ref.txt": {"sort[out/sort.txt]"},  # read by sort, started by a script
    },
    "case6": {
        "file:workflow/scripts/utils.py": {"proc[out/proc_s1.txt]", "proc[out/proc_s2.txt]"},
        "file:workflow/rules/common.smk": {"proc[out/proc_s1.txt]", "proc[out/proc_s2.txt]"},
        "func:get_scale": {"proc[out/proc_s1.txt]", "proc[out/proc_s2.txt]"},
    },
}  # fmt: skip


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One traced base run per case."""
    done = {}
    for case in EXPECTED:
        workdir = tmp_path_factory.mktemp(case) / "wf"
        shutil.copytree(CASES / case, workdir)
        traces = workdir / "traces"
        paths = [PLUGINS_PATH, str(workdir), os.environ.get("PYTHONPATH", "")]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
        env.update(DISTEA_TRACE=str(traces), PYTHONHASHSEED="0")
        cmd = [
            sys.executable, "-m", "snakemake", "--executor", "local", "-j", "1", "--forceall",
            "--nocolor", "--logger", "distea", "--logger-distea-dir", str(traces),
        ]  # fmt: skip
        proc = subprocess.run(
            cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=300
        )
        assert proc.returncode == 0, (case, proc.stderr[-3000:])
        done[case] = workdir
    return done


@pytest.mark.parametrize(
    "case,change", [(c, ch) for c, changes in EXPECTED.items() for ch in changes]
)
def test_every_job_the_change_altered_is_in_the_answer(runs, case, change):
    result = analyse(runs[case] / "traces", [Change.parse(change)])
    answered = {j.name for j in result.jobs}
    missing = EXPECTED[case][change] - answered
    assert not missing, (change, sorted(missing), result.warnings, result.justified)
    for key in EXPECTED[case][change] & set(result.conservative):
        # included without proof: the answer says so, naming the job or what it may run
        assert result.warnings, (change, key)
