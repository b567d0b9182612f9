"""The Python modules a search's objectives need, checked before any trial runs.

A search whose CNN sub-space needs torch, run where torch is missing, used to record every CNN
trial as failed (a ``ModuleNotFoundError`` buried in the records) and rank the sub-space as
failing. ``requires:`` in the spec names such modules; :func:`check_requirements` stops the
search up front with the ``pip install`` line to run.
"""

import importlib.util

from ._errors import ShadhoError
from ._spec import SearchSpec


def missing_requirements(spec: SearchSpec) -> list[tuple[str, str, str]]:
    """(sub-space or "*", module, pip requirement) for every required module not importable."""
    out = []
    for sub, modules in spec.requires.items():
        for module, requirement in modules.items():
            try:
                found = importlib.util.find_spec(module) is not None
            except (ImportError, ValueError):
                found = False
            if not found:
                out.append((sub, module, requirement))
    return out


def check_requirements(spec: SearchSpec) -> None:
    """Raise :class:`ShadhoError` with one line naming the first missing module and the
    ``pip install`` that provides it."""
    missing = missing_requirements(spec)
    if not missing:
        return
    sub, module, requirement = missing[0]
    who = "every sub-space" if sub == "*" else f"sub-space {sub!r}"
    also = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
    drop = "" if sub == "*" else f", or remove {sub!r} from the search space"
    raise ShadhoError(
        f"{who} needs the Python module {module!r}, which is not installed{also}: "
        f"run `pip install {requirement}`{drop}"
    )
