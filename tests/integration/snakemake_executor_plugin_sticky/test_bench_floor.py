"""bench/peers.py --floor's measurement-only patch (bench/_floor/sitecustomize.py, issue 29):
it reaches a process only through PYTHONPATH, never the shipped plugin."""

import os
import subprocess
import sys

import pytest

from tests.conftest import bench_module

pytestmark = pytest.mark.integration

peers = bench_module("peers")


def test_the_floor_patch_reaches_only_processes_that_put_it_on_their_path():
    probe = (
        "import snakemake.api\n"
        "from snakemake_executor_plugin_sticky import _isolation as i\n"
        "print(i.Isolation.run_direct.__name__)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(peers.FLOOR_PATH)}
    patched = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    assert patched.stdout.split() == ["bare"]
    env.pop("PYTHONPATH")
    shipped = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    assert shipped.stdout.split() == ["run_direct"]
