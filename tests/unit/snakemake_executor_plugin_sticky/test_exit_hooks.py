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
