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
