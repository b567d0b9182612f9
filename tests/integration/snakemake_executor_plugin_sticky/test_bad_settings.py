"""Bad sticky settings stop the run before any job with one clear line, never a traceback."""

import pytest

pytestmark = pytest.mark.integration

CASES = [
    (["--sticky-max-workers", "-1"], "--sticky-max-workers -1: must be at least 1"),
    (["--sticky-listen-address", "256.1.1.1"], "--sticky-listen-address 256.1.1.1: is not a valid"),
    (["--sticky-heartbeat-timeout", "0"], "--sticky-heartbeat-timeout 0.0: must be a number"),
]


@pytest.mark.parametrize(
    ("args", "line"), CASES, ids=lambda v: " ".join(v) if isinstance(v, list) else ""
)
def test_bad_setting_is_one_line_before_any_job(workflow, run_snakemake, args, line):
    wd = workflow("sticky_basic")
    run = run_snakemake(wd, *args)
    assert run.returncode != 0
    assert f"Error: {line}" in run.output, run.output
    assert "Traceback" not in run.output and 'File "' not in run.output, run.output
    assert not (wd / "shell.txt").exists()  # nothing ran
    assert not (wd / ".snakemake" / "sticky").exists()  # no worker was started
