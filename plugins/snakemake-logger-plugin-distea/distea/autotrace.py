"""``import distea.autotrace`` at the top of a rule script: trace it when ``$DISTEA_TRACE`` is set.

Without the variable the import does nothing, so the line can stay in production scripts. A
hook imported by the script itself (rather than a ``sitecustomize.py`` on ``PYTHONPATH``)
keeps tracing out of every other Python process of the run (Snakemake itself, conda, tools)
and cannot be shadowed by a site's own ``sitecustomize``.

In a ``script:`` the job is read from the ``snakemake`` object Snakemake's preamble put in
``__main__``; Snakemake runs a temporary copy of the script, whose functions are reported
under the real script's name.

The script's own functions were compiled before this import ran, so they cannot record
themselves. Under the ``instrument`` tracer, when the import is a top-level statement of the
script being run (``__name__ == "__main__"``), the *rest of the script* (the statements after
the import) is compiled with recording functions and run here, in the script's own
namespace, and the process then exits as the script would have (status 0, or whatever the
script raises). Each statement still runs once, in order, with the same globals (the names
the import statement binds are bound first); only the stack is a few frames deeper.
Anything else (an import inside a ``try``, a module imported under another name, the script
already compiled by a sticky worker) keeps the plain path, where a query naming a
script-local function falls back to the script body.
"""

import ast
import importlib
import os
import sys
from types import CodeType
from typing import Any, Optional

from . import _instrument
from . import tracer as _tracer
from ._schema import job_key


def _rest_of_script(trace: "_tracer.ProcessTrace") -> Optional[tuple[CodeType, dict[str, Any]]]:
    """The statements after ``import distea.autotrace`` in the running script, instrumented,
    and the script's namespace; None when that does not apply (see the module docstring)."""
    if getattr(trace, "mode", "") != "instrument":
        return None
    frame = sys._getframe(1)
    while frame is not None and (
        frame.f_code.co_filename.startswith("<frozen") or frame.f_code.co_filename == __file__
    ):
        frame = frame.f_back  # type: ignore[assignment]
    main = sys.modules.get("__main__")
    if (
        frame is None
        or main is None
        or frame.f_code.co_name != "<module>"
        or frame.f_globals is not vars(main)
        or frame.f_globals.get("__name__") != "__main__"
    ):
        return None
    filename = frame.f_code.co_filename
    if not trace.wanted_file(filename):
        return None
    try:
        with open(filename, "rb") as f:
            tree = ast.parse(f.read(), filename)
    except (OSError, SyntaxError, ValueError):
        return None
    line = frame.f_lineno
    index = next(
        (i for i, n in enumerate(tree.body) if n.lineno <= line <= (n.end_lineno or n.lineno)),
        None,
    )
    if index is None:
        return None
    node = tree.body[index]
    if not isinstance(node, ast.Import) or all(
        alias.name != "distea.autotrace" for alias in node.names
    ):
        return None
    rest = tree.body[index + 1 :]
    if not rest:
        return None
    namespace = frame.f_globals
    _bind(node, namespace)
    future = [
        n for n in tree.body[:index] if isinstance(n, ast.ImportFrom) and n.module == "__future__"
    ]
    module = ast.Module(body=[*future, *rest], type_ignores=[])
    module = _instrument.instrument_tree(module, trace.module_name(filename))
    return compile(module, filename, "exec", dont_inherit=True), namespace


def _bind(node: ast.Import, namespace: dict[str, Any]) -> None:
    """Bind the names the import statement binds once this import returns (``distea``, and
    any module listed after ``distea.autotrace`` in the same statement)."""
    for alias in node.names:
        if alias.name == "distea.autotrace":
            module = sys.modules[__name__]
        else:
            module = importlib.import_module(alias.name)
        if alias.asname:
            namespace[alias.asname] = module
        else:
            top = alias.name.partition(".")[0]
            namespace[top] = sys.modules[top]


def _start() -> None:
    already = _tracer.active()
    # A trace the start-up hook began for this process (a job's Python program) has not run
    # the script's rest instrumented yet: taken over here.
    fresh = already is None or getattr(already, "from_hook", False)
    main = sys.modules.get("__main__")
    smk = getattr(main, "snakemake", None)
    job = os.environ.get(_tracer.ENV_JOB) or None  # a program a job started names it there
    if smk is not None:
        job = job_key(smk.rule, dict(smk.wildcards.items()), list(smk.output))
    real = getattr(main, "__real_file__", None)
    shown = getattr(main, "__file__", None)
    aliases = {real: shown} if real and shown and real != shown else None
    trace = _tracer.start("script", aliases=aliases, job=job)
    if trace is not None and getattr(trace, "from_hook", False):
        trace.take_over("script", job)
    if trace is not None and smk is not None:
        _tracer.watch_job(trace, smk)
    if trace is not None and fresh:
        rest = _rest_of_script(trace)
        if rest is not None:
            code, namespace = rest
            exec(code, namespace)
            raise SystemExit(0)  # the script has run: do not run its rest a second time


_start()
