"""A fresh interpreter's exit (``_exit``): coverage from the standard library's own source.

Every standard-library module that registers an exit callback (``atexit.register`` or
``threading._register_atexit`` in its source) must be classified in ``STDLIB_EXIT_HOOKS``:
a new one (another Python version) fails here until someone decides what becomes of it when
an invocation ends.
"""

import re
import sysconfig
from pathlib import Path

from snakemake_executor_plugin_sticky._exit import STDLIB_EXIT_HOOKS

_REGISTERS = re.compile(r"\b(atexit\.register|_register_atexit)\s*\(")


def stdlib_exit_hook_sites() -> set[str]:
    root = Path(sysconfig.get_paths()["stdlib"])
    found = set()
    for path in root.rglob("*.py"):
        relative = path.relative_to(root).as_posix()
        if relative.split("/")[0] in ("test", "idlelib", "site-packages", "turtledemo", "lib2to3"):
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        if _REGISTERS.search(text):
            found.add(relative)
    return found


def test_every_stdlib_exit_hook_is_classified():
    sites = stdlib_exit_hook_sites()
    assert "logging/__init__.py" in sites and "multiprocessing/util.py" in sites  # the scan works
    missing = sorted(sites - STDLIB_EXIT_HOOKS.keys())
    assert not missing, f"classify these in _exit.STDLIB_EXIT_HOOKS: {missing}"


def test_no_classification_names_a_module_that_registers_nothing():
    assert not sorted(STDLIB_EXIT_HOOKS.keys() - stdlib_exit_hook_sites())


def test_moved_closed_or_dropped_template_files_are_named(tmp_path):
    """Direct mode: what a job did to the file objects and memory maps the build left
    (``_exit.moved_template_files``); untouched ones are not named."""
    import mmap

    from snakemake_executor_plugin_sticky import _exit

    (tmp_path / "table.tsv").write_text("h\nalpha\nbeta\n")
    reader = open(tmp_path / "table.tsv")  # noqa: SIM115 - the template keeps it open
    reader.readline()
    other = open(tmp_path / "table.tsv")  # noqa: SIM115
    index = mmap.mmap(-1, 16)
    positions = [
        p for p in _exit.template_file_positions(frozenset()) if p[0]() in (reader, other, index)
    ]
    assert len(positions) == 3 and _exit.moved_template_files(positions) == []
    for _line in reader:  # a scan that stops early: tell() is disabled, the position moved
        break
    other.close()
    index.seek(4)
    moved = _exit.moved_template_files(positions)
    assert len(moved) == 3, moved
    assert any("was closed" in m for m in moved)
    reader.close()
    index.close()


def test_c_streams_a_library_left_open_are_flushed_as_c_exit_does(tmp_path):
    """A C library's fprintf to a file it never closed stays in its stdio buffer until C's
    exit() flushes every stream; a job's process never calls exit(), so the job's end does
    it (red team 25i's c_library_report_file_unflushed)."""
    import ctypes

    from snakemake_executor_plugin_sticky._exit import flush_c_streams

    libc = ctypes.CDLL(None)
    libc.fopen.restype = ctypes.c_void_p
    libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    libc.fprintf.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    libc.fclose.argtypes = [ctypes.c_void_p]
    report = tmp_path / "report.txt"
    stream = libc.fopen(str(report).encode(), b"w")
    try:
        libc.fprintf(stream, b"processed 100 records\n")
        assert report.read_bytes() == b""  # buffered in C
        flush_c_streams()
        assert report.read_bytes() == b"processed 100 records\n"
    finally:
        libc.fclose(stream)
