"""Two processes storing (and reading) the same query at once never corrupt it.

Real processes, each with its own provider on the same store directory: the situation of two
Snakemake runs (or two jobs of one run on different nodes) writing the same output name.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import ckptstore
from ckptstore import CheckpointStore, file_digest

pytestmark = pytest.mark.integration

WRITER = """
import logging, sys, time
from pathlib import Path
from snakemake_storage_plugin_ckpt import StorageProvider, StorageProviderSettings

root, local, content, rounds = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
other = sys.argv[5]
provider = StorageProvider(
    local_prefix=local, logger=logging.getLogger("w"), settings=StorageProviderSettings(root=root)
)
versions = {("A" * 300_000).encode(), ("B" * 300_000).encode()}
steps = root.parent / "steps"


def wait_for(name, timeout=120.0):
    deadline = time.monotonic() + timeout
    while not (steps / name).exists():
        if time.monotonic() > deadline:
            sys.exit(f"{content}: timed out after {timeout} s waiting for {name}")
        time.sleep(0.002)


# Overlap by handshake, not by timing: both announce themselves and wait for each other (their
# imports take seconds under load), then neither runs more than one round ahead of the other.
(steps / f"ready-{content}").touch()
wait_for(f"ready-{other}")
began = time.time()
for i in range(rounds):
    if i:
        wait_for(f"{other}-{i - 1}")
    obj = provider.object("ckpt://results/shared.bin")
    obj.local_path().parent.mkdir(parents=True, exist_ok=True)
    obj.local_path().write_bytes((content * 300_000).encode())
    obj.store_object()
    reader = provider.object("ckpt://results/shared.bin")
    reader.retrieve_object()
    # Whoever won the last store, the copy is one complete version, never a mix.
    assert reader.local_path().read_bytes() in versions, "retrieved a torn file"
    (steps / f"{content}-{i}").touch()
print(began, time.time())
"""


def _env() -> dict[str, str]:
    plugins = str(Path(ckptstore.__file__).resolve().parents[1])
    path = os.pathsep.join([plugins, os.environ.get("PYTHONPATH", "")])
    return {**os.environ, "PYTHONPATH": path}


def test_two_processes_storing_the_same_query_keep_the_store_consistent(tmp_path):
    root = tmp_path / "store"
    CheckpointStore(root)  # created once, as a first run would
    (tmp_path / "steps").mkdir()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(root), str(tmp_path / f"site-{c}"), c, "40", other],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            env=_env(),
        )
        for c, other in (("A", "B"), ("B", "A"))
    ]
    spans = []
    for proc in procs:
        out, _ = proc.communicate(timeout=120)
        assert proc.returncode == 0, out
        spans.append([float(t) for t in out.split()[-2:]])
    (a_start, a_end), (b_start, b_end) = spans
    assert a_start < b_end and b_start < a_end, f"the writers did not overlap: {spans}"
    store = CheckpointStore(root, create=False)
    record = store.resolve_name("results/shared.bin")
    assert record is not None and record.size == 300_000
    objects = list(root.glob("objects/*/*"))
    assert len(objects) == 2  # one per content, however many stores
    for obj in objects:
        assert file_digest(obj) == "sha256:" + obj.parent.name + obj.name
    assert record.entry["file"] in {"sha256:" + o.parent.name + o.name for o in objects}
    assert len(list(root.glob("names/*/*.json"))) == 1
    assert not list(root.glob("tmp/*")) and not list(root.glob("active/*"))
