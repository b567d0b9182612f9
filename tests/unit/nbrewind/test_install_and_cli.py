"""Kernelspec installation and the command line's handling of bad input."""

import json
from pathlib import Path

from jupyter_client.kernelspec import KernelSpecManager

from nbrewind import KERNEL_NAMES, install_kernels


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
