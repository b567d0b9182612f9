"""Running one trial: find the objective, call it, and turn what happens into a record.

A failing objective's exception becomes a record with status "fail", the error text and
whether the objective declared that failure (:mod:`._failures`); TPE treats it as a very bad
result.
"""

import ast
import difflib
import importlib
import importlib.machinery
import importlib.util
import math
import os
import sys
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Optional

from ._errors import ShadhoError, TrialFailed
from ._failures import undeclared_note

Objective = Callable[..., Any]


def objective_problem(reference: str, search_dirs: Sequence[str] = ()) -> Optional[str]:
    """Why ``"module:function"`` names no function, found without importing the module (a
    CNN objective's module imports torch): its source found on ``search_dirs`` then
    ``sys.path`` and read for a top-level ``def``, assignment or import of that name. None
    when it does, or when the module has no Python source to read (it is then checked when a
    trial imports it)."""
    module_name, _, function = reference.partition(":")
    if not module_name or not function:
        return (
            f"objective {reference!r} is not of the form 'module:function' "
            "(e.g. objective: snakemake_shadho.digits:evaluate)"
        )
    dirs = [d for d in search_dirs if d]
    try:
        found = _find_module(module_name, dirs)
    except (ImportError, ValueError) as e:
        return f"cannot find the objective's module {module_name!r} ({e})"
    if found is None:
        return (
            f"cannot find the objective's module {module_name!r}; looked in {dirs} and on sys.path"
        )
    origin = found.origin
    if not origin or not origin.endswith(".py") or not os.path.isfile(origin):
        return None
    try:
        tree = ast.parse(Path(origin).read_text(encoding="utf-8"), filename=origin)
    except (OSError, SyntaxError, ValueError):
        return None  # a trial's import says what is wrong with it
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif not isinstance(node, ast.Expr | ast.Raise | ast.Assert | ast.Pass):
            return None  # maybe defined conditionally, in a loop...: left to the import
    if function in names:
        return None
    defined = sorted(
        n.name
        for n in tree.body
        if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and not n.name.startswith("_")
    )
    close = difflib.get_close_matches(function, defined, n=1)
    hint = f"; did you mean {module_name}:{close[0]}?" if close else ""
    return f"module {module_name!r} ({origin}) defines no {function!r}{hint}"


def _find_module(name: str, dirs: list[str]) -> Any:
    """The import spec of module ``name``, looked for on ``dirs`` (as ``load_objective``
    puts them first on sys.path) without running any of its code, else on sys.path (which
    imports its parent packages only)."""
    parts = name.split(".")
    spec = importlib.machinery.PathFinder.find_spec(parts[0], dirs) if dirs else None
    if spec is None:
        return importlib.util.find_spec(name)
    for i in range(1, len(parts)):
        locations = spec.submodule_search_locations
        if not locations:
            return None
        spec = importlib.machinery.PathFinder.find_spec(".".join(parts[: i + 1]), list(locations))
        if spec is None:
            return None
    return spec


def load_objective(reference: str, search_dirs: Sequence[str] = ()) -> Objective:
    """The function named by ``"module:function"``, importing the module from ``search_dirs``
    first (typically the workflow's folder and its ``scripts/``)."""
    module_name, _, function = reference.partition(":")
    if not module_name or not function:
        raise ShadhoError(
            f"objective {reference!r} is not of the form 'module:function' "
            "(e.g. objective: digits_objectives:evaluate)"
        )
    for folder in reversed(search_dirs):
        if folder and folder not in sys.path:
            sys.path.insert(0, folder)
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise ShadhoError(
            f"cannot import the objective's module {module_name!r} ({e}); "
            f"looked in {list(search_dirs)} and on sys.path"
        ) from e
    fn = getattr(module, function, None)
    if not callable(fn):
        raise ShadhoError(f"module {module_name!r} has no function {function!r}")
    return fn


def evaluate(
    objective: Objective,
    trial: Mapping[str, Any],
    **kwargs: Any,
) -> dict[str, Any]:
    """Call ``objective(params, **kwargs)`` for a planned trial and return its record.

    The objective returns a loss, or a dict with ``loss`` and other figures (kept under
    ``extra``). Exceptions and non-finite losses give a "fail" record with the error;
    ``declared`` says whether the objective declared that failure (:class:`TrialFailed`, a
    non-finite loss) or raised something else (:mod:`._failures`).
    """
    return run_trial(objective, trial, kwargs)[0]


PLANNED_FIELDS = ("trial", "round", "subspace", "hw_class", "tid", "vals", "params")


def planned_fields(trial: Mapping[str, Any]) -> dict[str, Any]:
    """What a trial's record takes from its plan (the rest is its outcome)."""
    return {
        k: trial[k] for k in ("trial", "round", "subspace", "hw_class", "tid", "vals", "params")
    }


def run_trial(
    objective: Objective,
    trial: Mapping[str, Any],
    kwargs: Mapping[str, Any],
    raise_undeclared: bool = False,
    max_failed: int = 0,
) -> tuple[dict[str, Any], Optional[BaseException]]:
    """:func:`evaluate`, and the exception of a failed trial. With ``raise_undeclared``, an
    exception the objective does not declare is raised as it is (its traceback shows where in
    the objective), with a note naming the trial: the trial's job fails."""
    record = planned_fields(trial)
    record["host"] = os.uname().nodename
    started, cpu0 = time.time(), time.process_time()
    t0 = time.perf_counter()
    failure: Optional[BaseException] = None
    cwd = os.getcwd()
    try:
        result = objective(dict(trial["params"]), **kwargs)
        extra = {}
        if isinstance(result, Mapping):
            extra = {k: v for k, v in result.items() if k != "loss"}
            result = result.get("loss")
        loss = float(result)
        if not math.isfinite(loss):
            raise TrialFailed(f"the objective returned a non-finite loss {loss!r}")
        record.update(status="ok", loss=loss, error=None, extra=_jsonable(extra))
    except BaseException as raised:  # noqa: BLE001 - a failing trial is data, not a crash
        e = raised
        if isinstance(e, KeyboardInterrupt):  # maybe a real Ctrl-C: never taken for a result
            e.add_note(undeclared_note(str(trial["trial"]), max_failed))
            raise
        if isinstance(e, SystemExit):  # sys.exit() in an objective ends no trial well
            e = RuntimeError(f"the objective called sys.exit({e.code!r})")
            e.__cause__ = raised
        declared = isinstance(e, TrialFailed)
        if raise_undeclared and not declared:
            e.add_note(undeclared_note(str(trial["trial"]), max_failed))
            if e is raised:
                raise
            raise e from raised
        failure = e
        record.update(status="fail", loss=None, error=_error_text(e), extra={})
        record["declared"] = declared
    finally:
        if os.getcwd() != cwd:  # the record and the next trial see the job's folder
            os.chdir(cwd)
    record["duration_s"] = time.perf_counter() - t0
    record["cpu_s"] = time.process_time() - cpu0
    record["started"] = started
    record["finished"] = time.time()
    return record, failure


def _error_text(e: BaseException, lines: int = 40) -> str:
    """``Type: message``, then the traceback from the objective's own frame on (its last
    ``lines`` lines): where in the objective, also when a library raised it deep down."""
    tb = e.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next  # this module's frames: not the user's
    text = "".join(traceback.format_exception(type(e), e, tb)).rstrip().splitlines()
    if len(text) > lines:
        text = ["  ..."] + text[-lines:]
    return _describe(e) + "\n" + "\n".join(text)


def _describe(e: BaseException) -> str:
    """``Type: message``, also for an exception whose ``str()`` itself fails."""
    try:
        text = str(e)
    except Exception:  # noqa: BLE001
        text = "<exception str() failed>"
    return f"{type(e).__name__}: {text}"


def _jsonable(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item"):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return repr(value)
