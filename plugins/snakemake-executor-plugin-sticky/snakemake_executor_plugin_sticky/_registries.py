"""Process-global state of libraries, read through their documented getters.

Direct mode (an invocation runs in the worker itself) compares a fingerprint of the process
before and after every invocation (:mod:`._fingerprint`); module globals are compared there by
identity, but much library state lives where no module global changes: C-level settings
(``decimal.getcontext()``, ``socket.getdefaulttimeout()``, ``gc.isenabled()``), context
variables (numpy's print options), option registries (pandas, matplotlib's ``rcParams``).
Each reader below returns such state of one library, as a dict of label -> value, through the
library's documented public getters. A reader runs only for a module already in
``sys.modules`` (it never imports anything) and must not change the state it reads.

The list is the library matrix's (``tests/integration/snakemake_executor_plugin_sticky/
library_matrix.py``): every state a matrix case changes has a reader here, and a test checks
that each case's change shows in :func:`read_registries`.
"""

import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any

Reader = Callable[[ModuleType], dict[str, Any]]


def _gc(m: ModuleType) -> dict[str, Any]:
    return {"isenabled": m.isenabled(), "threshold": m.get_threshold()}


READERS: dict[str, Reader] = {
    "gc": _gc,
}
"""Module name (as in ``sys.modules``) -> its reader."""


def read_registries(modules: "dict[str, Any] | None" = None) -> dict[tuple[str, str], Any]:
    """The state of every loaded module that has a reader: (module, label) -> value. A reader
    that raises gives one entry naming the exception type (never the run's failure)."""
    loaded = sys.modules if modules is None else modules
    found: dict[tuple[str, str], Any] = {}
    for name, reader in READERS.items():
        module = loaded.get(name)
        if module is None:
            continue
        try:
            values = reader(module)
        except Exception as e:  # noqa: BLE001 - a reader must never fail an invocation
            found[(name, "<reader>")] = f"unreadable: {type(e).__name__}"
            continue
        for label, value in values.items():
            found[(name, label)] = value
    return found
