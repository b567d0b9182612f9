"""The checkpoint store under real concurrent processes (integration: these start processes).

The writers run as plain ``python -c`` programs that import only ``ckptstore``: nothing of
``tests`` needs to be importable in a child (under the ``pytest`` console script it is not).
They overlap by a file handshake, not by timing: each announces itself and waits for the
other, then never runs more than one round ahead of it.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

import ckptstore
from ckptstore import CheckpointStore, file_digest
from ckptstore.store import FORMAT

pytestmark = pytest.mark.integration

KEY_A = "a" * 64

# Shared by the writers below: a barrier on files in STEPS (argv: steps, me, peers...).
HANDSHAKE = """
import sys, time
from pathlib import Path

def wait_for(steps, name, timeout=120.0):
    deadline = time.monotonic() + timeout
    while not (steps / name).exists():
        if time.monotonic() > deadline:
            sys.exit(f"timed out after {timeout} s waiting for {name}")
        time.sleep(0.002)
"""

OPENER = (
    HANDSHAKE
    + """
from ckptstore.store import CheckpointStore
steps, me, count, root = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
(steps / f"ready-{me}").touch()
for peer in range(count):
    wait_for(steps, f"ready-{peer}")
CheckpointStore(root)
"""
)

WRITER = (
    HANDSHAKE
    + """
from ckptstore import CheckpointStore
steps, me, other = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
root, workdir, rounds = sys.argv[4], Path(sys.argv[5]), int(sys.argv[6])
store = CheckpointStore(root)
(steps / f"ready-{me}").touch()
wait_for(steps, f"ready-{other}")
began = time.time()
for i in range(rounds):
    if i:
        wait_for(steps, f"{other}-{i - 1}")  # at most one round ahead of the other writer
    store.record("a" * 64, {"results/model.bin": "results/model.bin"}, str(workdir), {"i": i})
    assert store.restore("a" * 64, workdir / f"restored-{me}") is not None
    (steps / f"{me}-{i}").touch()
print(began, time.time())
"""
)


def _python(code: str, *args: object) -> "subprocess.Popen[str]":
    """``python -c CODE ARGS...`` importing this checkout's ckptstore, installed or not."""
    plugins = str(Path(ckptstore.__file__).resolve().parents[1])
    path = os.pathsep.join(p for p in (plugins, os.environ.get("PYTHONPATH")) if p)
    return subprocess.Popen(
        [sys.executable, "-c", code, *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "PYTHONPATH": path},
    )


def test_many_processes_creating_one_store_at_once_all_open_it(tmp_path):
    """Eight processes open the same new store at the same moment; every one succeeds."""
    root = tmp_path / "shared"
    steps = tmp_path / "steps"
    steps.mkdir()
    procs = [_python(OPENER, steps, n, 8, root) for n in range(8)]
    outputs = [p.communicate(timeout=180)[0] for p in procs]
    assert [p.returncode for p in procs] == [0] * 8, outputs
    assert (root / "FORMAT").read_text().strip() == FORMAT


def test_two_runs_writing_the_same_key_at_once_never_corrupt_it(tmp_path):
    store = CheckpointStore(tmp_path / "store")
    workdir = tmp_path / "site-a"
    (workdir / "results").mkdir(parents=True)
    (workdir / "results" / "model.bin").write_bytes(os.urandom(3 * 1024 * 1024 + 7))
    steps = tmp_path / "steps"
    steps.mkdir()
    procs = [
        _python(WRITER, steps, me, other, store.root, workdir, 15)
        for me, other in (("A", "B"), ("B", "A"))
    ]
    spans = []
    for proc in procs:
        out = proc.communicate(timeout=180)[0]
        assert proc.returncode == 0, out
        spans.append([float(t) for t in out.split()[-2:]])
    (a_start, a_end), (b_start, b_end) = spans
    assert a_start < b_end and b_start < a_end, f"the writers did not overlap: {spans}"
    manifest = store.lookup(KEY_A)
    assert manifest is not None
    for obj in store.root.glob("objects/*/*"):
        assert file_digest(obj) == "sha256:" + obj.parent.name + obj.name
    assert not list(store.root.glob("tmp/*"))
    assert store.restore(KEY_A, tmp_path / "check") is not None
    restored = tmp_path / "check" / "results" / "model.bin"
    assert restored.read_bytes() == (workdir / "results" / "model.bin").read_bytes()
