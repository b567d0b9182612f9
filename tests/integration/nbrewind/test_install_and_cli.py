"""The command line's handling of bad input, in a real ``python -m nbrewind`` process
(integration: these start processes)."""

import subprocess
import sys

import pytest

from tests.conftest import PLUGINS_PATH

pytestmark = pytest.mark.integration


def nbrewind(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "nbrewind", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={"PYTHONPATH": PLUGINS_PATH, "PATH": "/usr/bin:/bin"},
    )


def test_missing_or_broken_notebooks_are_clear_errors_not_tracebacks(tmp_path):
    missing = nbrewind("inspect", str(tmp_path / "nope.ipynb"))
    assert missing.returncode == 2 and "no such notebook" in missing.stderr
    assert "Traceback" not in missing.stderr
    (tmp_path / "bad.ipynb").write_text("{not json")
    bad = nbrewind("trust", str(tmp_path / "bad.ipynb"))
    assert bad.returncode == 2 and "not a readable notebook" in bad.stderr


def test_run_and_pack_paths_are_one_line_errors(tmp_path):
    """Issue 31's red team, cases 33, 34 and 37: each was a traceback (papermill's, or an
    IsADirectoryError from a rename)."""
    nb = tmp_path / "a.ipynb"
    nb.write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    (tmp_path / "site-b").mkdir()
    cases = {
        ("run", "nosuch.ipynb", "o.ipynb"): "nosuch.ipynb: no such notebook",
        ("run", "a.ipynb", "nodir/x.ipynb"): "its folder nodir does not exist; create it first",
        ("pack", "a.ipynb", "site-b"): "site-b is a directory; name the notebook to write in it",
    }
    for args, expected in cases.items():
        done = nbrewind(*args, cwd=tmp_path)
        assert done.returncode == 2, (args, done.stderr)
        (line,) = done.stderr.strip().splitlines()
        assert line.startswith("nbrewind: ") and expected in line, (args, done.stderr)
        assert not (tmp_path / "o.ipynb").exists()
    assert list((tmp_path / "site-b").iterdir()) == []
