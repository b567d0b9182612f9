"""Keys of the job as Snakemake executes it (issue 26): the issue's stale restores, each an
ordinary edit, must give a fresh run's outputs at a fresh site through the store, and edits
that change nothing a job does must still restore it.

The workflow (``tests/integration/workflows/checkpoint_keys``) has one rule per case. Site A
runs it with a store (``--cores 2``); then every edit of a round is applied and two fresh
copies run with ``--cores 1``: site B with the store, site C without. Every output (bytes and
permission bits) of B must equal C's, and exactly the rules the edits touch rerun at B.
First pass, before the key followed the job as executed: 9 of 13 outputs restored stale.
"""

import os
import re
import shutil
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROUND_1 = [
    # (file, old, new): each an ordinary edit that changes a fresh run's output
    ("Snakefile", 'GREETING = "hi"', 'GREETING = "hello"'),  # a global used in shell:
    ("Snakefile", 'return f"v1 {x}"', 'return f"v2 {x}"'),  # a function run: calls
    ("Snakefile", 'SEP = "-"', 'SEP = "+"'),  # a class attribute run: reads
    ("Snakefile", 'input: "data/a.txt", "data/b.txt"', 'input: "data/b.txt", "data/a.txt"'),
    (
        "Snakefile",
        'output: "out/os_a.txt", "out/os_b.txt"',
        'output: "out/os_b.txt", "out/os_a.txt"',
    ),
    ("mypkg/sub.py", "VALUE = 1", "VALUE = 2"),  # a workflow-local package
    ("wrappers/hello/wrapper.py", "hello v1", "hello v2"),  # a local wrapper's file
    ("Snakefile", "chmod 644 {output}", "chmod 755 {output}"),  # only a mode (cp -p below)
    # edits that change nothing a job does: their jobs must be restored
    ("Snakefile", 'message: "making the message file"', 'message: "writing the message file"'),
    ("Snakefile", "UNRELATED = 1", "# a comment that moves every line below\n\nUNRELATED = 2"),
]
RERUN_1 = {
    "global_shell",
    "run_func",
    "run_class",
    "cat",
    "out_swap",
    "pkg",
    "wrapper",
    "mode_up",
    "mode_down",
    "threads",  # --cores 2 at site A, 1 here: {threads} is 1
}
ROUND_2 = [
    ("Snakefile", "export PFX=one; ", "export PFX=two; "),  # shell.prefix(): every job
    ("config.yaml", "word: alpha", "word: beta"),  # the config a module's rule sees
]
RERUN_2 = {
    "global_shell",
    "prefix",
    "cat",
    "out_swap",
    "threads",
    "mode_up",
    "mode_down",
    "m_word",  # reads its module's config["word"] (the main config has no "word")
    "run_func",  # run: blocks see the whole config and call shell()
    "run_class",
    "run_noop",
    "wrapper",  # wrappers may read any config
    # the local executor starts script jobs through shell() too: they see the prefix's
    # exports (the red team's script_shell_prefix_env)
    "pkg",
    "message",
}
ALL_RULES = set(RERUN_2)


def outputs(site: Path) -> dict[str, tuple[bytes, int]]:
    return {
        str(p.relative_to(site)): (p.read_bytes(), os.stat(p).st_mode & 0o7777)
        for p in sorted((site / "out").rglob("*"))
        if p.is_file()
    }


def fresh_copy(source: Path, to: Path) -> Path:
    shutil.copytree(source, to, ignore=shutil.ignore_patterns(".snakemake", "out", "__pycache__"))
    return to


def edit(site: Path, edits: list[tuple[str, str, str]]) -> None:
    for name, old, new in edits:
        path = site / name
        text = path.read_text()
        assert old in text, (name, old)
        path.write_text(text.replace(old, new))


def reran(output: str) -> set[str]:
    return set(re.findall(r"checkpoints: rule (\w+) \(.*\) reruns:", output))


def test_edits_the_old_key_missed_give_a_fresh_run_at_a_fresh_site(
    workflow, run_snakemake, tmp_path
):
    store = str(tmp_path / "store")
    site_a = workflow("checkpoint_keys", "site-a")
    run = run_snakemake(site_a, "--sticky-checkpoints", store)
    assert run.returncode == 0, run.output
    assert "is not cached" not in run.output, run.output
    assert f"0 job(s) restored, {len(ALL_RULES)} stored" in run.output, run.output

    source = site_a
    for number, (edits, expected) in enumerate([(ROUND_1, RERUN_1), (ROUND_2, RERUN_2)], 1):
        site_b = fresh_copy(source, tmp_path / f"round{number}" / "site-b")
        edit(site_b, edits)
        site_c = fresh_copy(site_b, tmp_path / f"round{number}" / "site-c")
        with_store = run_snakemake(site_b, "--sticky-checkpoints", store, cores=1)
        assert with_store.returncode == 0, with_store.output
        fresh = run_snakemake(site_c, cores=1)
        assert fresh.returncode == 0, fresh.output
        stale = {
            name: (value, outputs(site_c).get(name))
            for name, value in outputs(site_b).items()
            if outputs(site_c).get(name) != value
        }
        assert not stale, f"round {number}: restored stale: {stale}"
        assert set(outputs(site_b)) == set(outputs(site_c))
        assert reran(with_store.output) == expected, with_store.output
        restored = len(ALL_RULES) - len(expected)
        assert f"checkpoints: {restored} job(s) restored" in with_store.output, with_store.output
        source = site_b


def test_a_site_launched_differently_restores_every_job(workflow, tmp_path):
    """What the launch gives the process (resource limits, priority, an ignored SIGHUP as
    under nohup, Snakemake's own logging from --verbose or --logger) is not a job's: the
    ``run:`` blocks, whose key holds the library state of Snakemake's process, restore too.
    Before, the key held that whole state: this test reran all three ``run:`` blocks, and
    bench/checkpoint_keys.py's site B reran all 500 of its own (a difference neither site's
    workflow made)."""
    import signal
    import subprocess

    from tests.conftest import snakemake_command

    store = str(tmp_path / "store")
    site_a = workflow("checkpoint_keys", "site-a")
    launch = ["prlimit", "--nofile=1024:4096", "nice", "-n", "3"]
    run = subprocess.run(
        [*launch, *snakemake_command("--sticky-checkpoints", store, "--verbose")],
        cwd=site_a,
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN),
    )
    assert run.returncode == 0, run.stdout + run.stderr
    site_b = fresh_copy(site_a, tmp_path / "site-b")
    again = subprocess.run(
        snakemake_command("--sticky-checkpoints", store, "--logger", "distea"),
        cwd=site_b,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = again.stdout + again.stderr
    assert again.returncode == 0, output
    assert reran(output) == set(), output
    assert f"checkpoints: {len(ALL_RULES)} job(s) restored" in output, output


def test_a_site_with_another_umask_gets_a_fresh_runs_modes(workflow, tmp_path):
    """Every job inherits the umask, and it sets the modes of what the job creates: at a site
    whose umask is 077 a fresh run makes 0600 files, so the store's 0644 ones are not restored
    there (before: restored with the first site's modes)."""
    import subprocess

    from tests.conftest import snakemake_command

    def run(site: Path, *args: str, umask: int) -> str:
        done = subprocess.run(
            snakemake_command(*args),
            cwd=site,
            capture_output=True,
            text=True,
            timeout=600,
            preexec_fn=lambda: os.umask(umask) and None,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout + done.stderr

    store = str(tmp_path / "store")
    site_a = workflow("checkpoint_keys", "site-a")
    run(site_a, "--sticky-checkpoints", store, umask=0o022)
    site_b = fresh_copy(site_a, tmp_path / "site-b")
    site_c = fresh_copy(site_a, tmp_path / "site-c")
    run(site_b, "--sticky-checkpoints", store, umask=0o077)
    run(site_c, umask=0o077)
    assert outputs(site_b) == outputs(site_c)
    assert any(mode == 0o600 for _, mode in outputs(site_c).values())  # the case is real
