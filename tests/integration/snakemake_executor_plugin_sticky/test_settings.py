"""Executor settings reach the executor from the command line and from profiles."""

from pathlib import Path

import pytest

pytestmark = pytest.mark.integration


def test_help_lists_the_sticky_flags(run_snakemake, tmp_path):
    run = run_snakemake(tmp_path, "--help")
    for flag in [
        "--sticky-max-workers",
        "--sticky-idle-timeout",
        "--sticky-listen-address",
        "--sticky-heartbeat-timeout",
        "--sticky-templates",
    ]:
        assert flag in run.output


def test_max_workers_flag_caps_the_workers(workflow, run_snakemake):
    wd = workflow("sticky_basic")
    run = run_snakemake(wd, "--sticky-max-workers", "1", cores=2)
    assert run.returncode == 0, run.output
    assert len(run.events("worker_started")) == 1


def test_profile_keys_configure_the_executor(workflow, run_snakemake):
    wd = workflow("sticky_basic")
    profile = wd / "profile"
    profile.mkdir()
    (profile / "config.yaml").write_text(
        "executor: sticky\nsticky-max-workers: 1\nsticky-idle-timeout: 120\n"
    )
    run = run_snakemake(wd, "--profile", str(profile), cores=2)
    assert run.returncode == 0, run.output
    assert len(run.events("worker_started")) == 1


def test_templates_file_can_live_elsewhere(workflow, run_snakemake):
    wd = workflow("sticky_basic")
    moved = wd / "config" / "templates.py"
    moved.parent.mkdir()
    (wd / "sticky_templates.py").rename(moved)
    missing = run_snakemake(wd)
    assert missing.returncode != 0 and "does not exist" in missing.output
    run = run_snakemake(wd, "--sticky-templates", str(moved))
    assert run.returncode == 0, run.output


def test_shipped_checkpoint_profile_stores_under_home(workflow, run_snakemake, tmp_path):
    """profiles/local-checkpoints keeps its store under ~/.cache: `~` is expanded."""
    wd = workflow("sticky_basic")
    profile = Path(__file__).parents[3] / "profiles" / "local-checkpoints"
    home = tmp_path / "home"
    run = run_snakemake(wd, "--profile", str(profile), env={"HOME": str(home)})
    assert run.returncode == 0, run.output
    assert (home / ".cache" / "sticky-checkpoints" / "FORMAT").is_file()
    assert "checkpoints: 0 job(s) restored, 16 stored" in run.output
