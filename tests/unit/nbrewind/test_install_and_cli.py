"""Kernelspec installation and the command line's handling of bad input."""

import json
import subprocess
import sys
from pathlib import Path

from jupyter_client.kernelspec import KernelSpecManager

from nbrewind import KERNEL_NAMES, install_kernels
from tests.conftest import PLUGINS_PATH


def test_install_kernels_into_a_prefix_is_found_by_jupyter(tmp_path, monkeypatch):
    installed = install_kernels(prefix=str(tmp_path))
    assert len(installed) == 2
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "share" / "jupyter"))
    specs = KernelSpecManager().find_kernel_specs()
    for name in KERNEL_NAMES:
        spec = json.loads((Path(specs[name]) / "kernel.json").read_text())
        assert spec["argv"][:3] == ["python", "-m", "nbrewind.kernel"]
        assert spec["env"]["NBREWIND_MODE"] == name.removeprefix("nbrewind-")
        assert spec["env"]["PYTHONHASHSEED"] == "0", "set and dict pickles must be stable"


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
