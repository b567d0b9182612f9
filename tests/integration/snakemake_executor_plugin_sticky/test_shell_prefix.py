"""``shell.prefix()`` reaches sticky invocations as it reaches local ``script:`` jobs.

Under ``--executor local`` a ``script:`` job's interpreter runs through ``shell()``, behind the
Snakefile's prefix: the script sees what the prefix exported and unset, and the umask it set.
A sticky invocation has no shell in between; the executor runs the prefix once, as ``shell()``
would, and gives every invocation its effects (``_shell_prefix``). Both modes, 2 jobs each, on
one worker per template, byte-identical to local. A prefix whose effects a running interpreter
cannot take (the red team's round 3), or that fails, and a suffix: the jobs run fresh.
"""

import os
import subprocess
from pathlib import Path

import pytest

from snakemake_executor_plugin_sticky._shell_prefix import PrefixEffects, probe
from tests.conftest import SnakemakeRun, snakemake_command

pytestmark = pytest.mark.integration

SNAKEFILE = """\
shell.prefix(
    "export MODE=fast; export SEEN=\\"$MODE-$HOME\\"; unset STICKY_PREFIX_GONE; umask 027; "
)


rule all:
    input:
        expand("out/{t}/{k}.txt", t=["forked", "direct"], k=[1, 2]),


rule job:
    output:
        "out/{t}/{k}.txt",
    resources:
        sticky=lambda wc: wc.t,
    script:
        "job.py"
"""

SCRIPT = """\
import os
import stickyinvoc

stickyinvoc.state(snakemake)
out = snakemake.output[0]
with open(out, "w") as f:
    mask = os.umask(0)
    os.umask(mask)
    f.write(f"MODE={os.environ.get('MODE')}\\n")
    f.write(f"SEEN={os.environ.get('SEEN')}\\n")
    f.write(f"GONE={'STICKY_PREFIX_GONE' in os.environ}\\n")
    f.write(f"umask={mask:o}\\n")
    f.write(f"mode={os.stat(out).st_mode & 0o777:o}\\n")
"""

TEMPLATES = """\
from stickyinvoc import template


@template("forked")
def forked():
    return {}


@template("direct", isolation="direct")
def direct():
    return {}
"""


def run(root: Path, name: str, executor: str, snakefile: str = SNAKEFILE) -> SnakemakeRun:
    workdir = root / name
    workdir.mkdir()
    (workdir / "Snakefile").write_text(snakefile)
    (workdir / "job.py").write_text(SCRIPT)
    (workdir / "sticky_templates.py").write_text(TEMPLATES)
    args = ["--sticky-max-workers", "2"] if executor == "sticky" else []
    proc = subprocess.run(
        snakemake_command(*args, executor=executor, cores=1),
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "STICKY_PREFIX_GONE": "1"},
    )
    return SnakemakeRun(workdir, proc.returncode, proc.stdout + proc.stderr)


def outputs(run: SnakemakeRun) -> dict[str, str]:
    return {
        str(p.relative_to(run.workdir)): p.read_text()
        for p in sorted((run.workdir / "out").rglob("*.txt"))
    }


def test_invocations_see_what_the_prefix_does(tmp_path):
    local = run(tmp_path, "local", "local")
    assert local.returncode == 0, local.output
    expected = outputs(local)
    assert len(expected) == 4
    assert all("MODE=fast\nSEEN=fast-" in text for text in expected.values()), expected
    assert all("GONE=False\numask=27\nmode=640\n" in text for text in expected.values())
    sticky = run(tmp_path, "sticky", "sticky")
    assert sticky.returncode == 0, sticky.output
    assert outputs(sticky) == expected
    assert {r["template"] for r in sticky.events("invocation")} == {"forked", "direct"}
    assert not sticky.events("worker_retired")  # the prefix's effects are put back


def test_a_prefix_an_invocation_cannot_take_runs_the_jobs_fresh(tmp_path):
    """What Python reads as it starts (PYTHONHASHSEED, PYTHONPATH), a ulimit, a prefix that
    fails, a suffix: observed, and the run's sticky jobs run as local script jobs behind the
    real prefix (one warning), so outputs, logs and exit status are local's."""
    for change, why in [
        ('"export PYTHONPATH=$PWD/lib PYTHONHASHSEED=0; "', "sys.flags, sys.path"),
        ('"ulimit -S -n 512; "', "resource limits"),
        ('"exit 3; "', "it exits with status 3"),
    ]:
        first, last = SNAKEFILE.index('    "export MODE'), SNAKEFILE.index('umask 027; "') + 12
        snakefile = SNAKEFILE[:first] + "    " + change + SNAKEFILE[last:]
        assert snakefile != SNAKEFILE
        name = str(abs(hash(change)))
        local = run(tmp_path, f"local{name}", "local", snakefile)
        sticky = run(tmp_path, f"sticky{name}", "sticky", snakefile)
        assert sticky.returncode == local.returncode, sticky.output
        assert outputs(sticky) == outputs(local)
        assert why in sticky.output and "run as local script jobs" in sticky.output
        assert sticky.output.count("run as local script jobs") == 1
    suffixed = SNAKEFILE.replace(
        "\n\nrule all:", '\nshell.suffix(" >> suffix.txt")\n\nrule all:', 1
    )
    local = run(tmp_path, "local-suffix", "local", suffixed)
    sticky = run(tmp_path, "sticky-suffix", "sticky", suffixed)
    assert local.returncode == sticky.returncode == 0, sticky.output
    assert outputs(sticky) == outputs(local)
    assert "shell.suffix(" in sticky.output


def test_probe_runs_the_prefix_as_shell_would():
    found = probe("export MODE=fast; unset STICKY_PROBE_X; umask 027; echo noise; ", "/bin/sh")
    assert isinstance(found, PrefixEffects)
    assert found.environ["MODE"] == "fast"
    assert found.umask == 0o027
    assert not probe(None, None) and not probe("  ", "/bin/sh")


def test_probe_names_a_failing_prefix_in_one_line():
    found = probe("echo broken >&2; exit 4; ", "/bin/sh")
    assert found == "shell.prefix('echo broken >&2; exit 4; '): it exits with status 4: broken"
