"""Snakemake's own ``script:`` test workflows (copied into
``tests/integration/workflows/snakemake_upstream``, see its README) with their Python script
rules opted in to a sticky template: they must give Snakemake's expected results, and the
metrics must show that every script job ran as an invocation (all on one worker)."""

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import WORKFLOWS, SnakemakeRun, snakemake_command

pytestmark = pytest.mark.integration

UPSTREAM = WORKFLOWS / "snakemake_upstream"
PARAMSPACES = [
    "default", "empty", "one", "two", "full", "full_reorder", "sep", "sep_and_pattern",
    "filenamesep",
]  # fmt: skip

# workflow -> (its Python script: rules, the targets to build, how many script jobs they are)
CASES = {
    "test_script_py": (["2", "3"], [], 2),  # unnamed rules: Snakemake numbers them
    "test_script_import_snakemake_obj": (["a"], [], 1),
    "test_script": (["3"], ["test.in"], 1),  # its other rules are R, Julia, Bash
    "test_paramspace": ([f"simulate_{p}" for p in PARAMSPACES], [], 18),
}


def run_upstream(tmp_path: Path, name: str, template: str) -> SnakemakeRun:
    rules, targets, _ = CASES[name]
    workdir = tmp_path / name
    shutil.copytree(UPSTREAM / name, workdir)
    opt_in = [f"{rule}:sticky='{template}'" for rule in rules]
    args = [
        "--sticky-templates", str(UPSTREAM / "sticky_templates.py"),
        "--sticky-max-workers", "1",
        "--set-resources", *opt_in,
        "--", *targets,
    ]  # fmt: skip
    proc = subprocess.run(
        snakemake_command(*args), cwd=workdir, capture_output=True, text=True, timeout=240
    )
    return SnakemakeRun(workdir, proc.returncode, proc.stdout + proc.stderr)


@pytest.mark.parametrize(
    "name, template",
    [(name, "upstream") for name in CASES] + [("test_paramspace", "upstream_fork")],
)
def test_snakemake_script_workflow_passes_as_invocations(tmp_path, name, template):
    run = run_upstream(tmp_path, name, template)
    assert run.returncode == 0, run.output
    expected = UPSTREAM / name / "expected-results"
    compared = 0
    for path in sorted(expected.rglob("*")):
        if path.is_file():
            produced = run.workdir / path.relative_to(expected)
            assert produced.read_bytes() == path.read_bytes(), f"{produced} differs"
            compared += 1
    assert compared
    invocations = run.events("invocation")
    assert len(invocations) == CASES[name][2] and all(r["ok"] for r in invocations)
    assert {r["template"] for r in run.events("state_built")} == {template}
    assert len({r["worker"] for r in invocations}) == 1
