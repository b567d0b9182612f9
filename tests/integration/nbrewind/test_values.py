"""Checkpoint serialisation across processes (integration: each hash comes from a real Python
process)."""

import subprocess
import sys

import pytest

pytestmark = pytest.mark.integration


NOTEBOOK_FUNCTION = """
import sys
from nbrewind._values import serialize
ns = {"__name__": "__main__"}
exec("def scale(x, k=2):\\n    return x * k * factor\\n", ns)
print(serialize(ns["scale"], "c").hash)
"""


def test_notebook_function_hash_is_the_same_in_another_process():
    """Cell file names embed the kernel's pid; the fingerprint must not."""
    hashes = {
        subprocess.run(
            [sys.executable, "-c", NOTEBOOK_FUNCTION.replace('"c"', f'"c{i}"')],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for i in range(2)
    }
    assert len(hashes) == 1 and next(iter(hashes)).startswith("sha256:")
