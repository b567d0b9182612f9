"""Undeclared writes of a sticky invocation, seen by the worker's audit hook (in this process:
the hook is installed once, and only collects while a watch is started)."""

import os
import shutil
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from snakemake_executor_plugin_sticky import _audit


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "existing.log").write_text("old\n")
    (tmp_path / "old-side.txt").write_text("x\n")
    return tmp_path


def watched(body) -> list[str]:
    job = SimpleNamespace(output=["out.txt", "outdir"], log=["logs/job.log"])
    _audit.start(os.getcwd(), job)
    try:
        body()
    finally:
        found = _audit.stop()
    return found


def test_declared_outputs_and_logs_are_not_counted(workdir):
    def body():
        Path("out.txt").write_text("result")
        os.makedirs("outdir/sub")
        Path("outdir/sub/f").write_text("f")
        os.makedirs("logs", exist_ok=True)  # the folder of a log: a restore makes it too
        os.makedirs("logs", exist_ok=True)  # a folder that exists: nothing changes
        Path("logs/job.log").write_text("log")

    assert watched(body) == []


def test_side_file_append_remove_copy_and_link_are_counted(workdir):
    def body():
        Path("order.out").write_text("side\n")
        with open("existing.log", "a") as f:  # the README case: a log it appends to
            f.write("more\n")
        os.remove("old-side.txt")
        shutil.copyfile("existing.log", "copy.txt")
        os.symlink("out.txt", "alias")

    assert watched(body) == ["alias", "copy.txt", "existing.log", "old-side.txt", "order.out"]


def test_os_level_open_for_writing_is_counted(workdir):
    def body():
        fd = os.open("raw.bin", os.O_WRONLY | os.O_CREAT, 0o644)
        os.close(fd)

    assert watched(body) == ["raw.bin"]


def test_scratch_files_and_atomic_writes_leave_nothing_to_count(workdir):
    def body():
        Path("scratch.tmp").write_text("x")
        os.remove("scratch.tmp")
        Path(".out.txt.partial").write_text("result")
        os.replace(".out.txt.partial", "out.txt")

    assert watched(body) == []


def test_reading_bytecode_and_temp_dir_are_not_counted(workdir):
    def body():
        Path("existing.log").read_text()
        os.makedirs("pkg/__pycache__", exist_ok=True)
        Path("pkg/__pycache__/m.cpython-311.pyc").write_bytes(b"")
        with tempfile.NamedTemporaryFile(dir=tempfile.gettempdir()) as f:
            f.write(b"scratch")
        with open(os.devnull, "w") as f:
            f.write("x")

    assert watched(body) == ["pkg"]  # only the package folder it made; not its byte code


def test_writes_inside_the_working_directory_count_even_under_the_temp_dir(workdir):
    """Tests (and some sites) keep the working directory under /tmp: it is still checked."""
    assert str(workdir).startswith(tempfile.gettempdir())
    assert watched(lambda: Path("side.txt").write_text("x")) == ["side.txt"]


def test_outside_the_working_directory_is_named_absolutely(workdir):
    folder = Path("/var/tmp") if os.access("/var/tmp", os.W_OK) else Path.home()
    target = folder / f".ckpt-audit-test-{os.getpid()}"
    try:
        assert watched(lambda: target.write_text("x")) == [str(target)]
    finally:
        target.unlink(missing_ok=True)


def test_nothing_is_collected_between_invocations(workdir):
    watched(lambda: None)
    Path("between.txt").write_text("x")  # not during an invocation (e.g. a template build)
    assert watched(lambda: None) == []
