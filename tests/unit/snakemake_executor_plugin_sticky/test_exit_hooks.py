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
