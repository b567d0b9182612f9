"""Running one trial: find the objective, call it, and turn what happens into a record.

A failing objective never stops the search: its exception becomes a record with status
"fail" and the error text, and TPE treats it as a very bad result.
"""

import importlib
import math
import os
import sys
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ._errors import ShadhoError

Objective = Callable[..., Any]


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
    ``extra``). Exceptions and non-finite losses give a "fail" record with the error.
    """
    record = {k: trial[k] for k in ("trial", "round", "subspace", "hw_class", "tid", "vals")}
    record["params"] = trial["params"]
    record["host"] = os.uname().nodename
    started, cpu0 = time.time(), time.process_time()
    t0 = time.perf_counter()
    try:
        result = objective(dict(trial["params"]), **kwargs)
        extra = {}
        if isinstance(result, Mapping):
            extra = {k: v for k, v in result.items() if k != "loss"}
            result = result.get("loss")
        loss = float(result)
        if not math.isfinite(loss):
            raise ValueError(f"the objective returned a non-finite loss {loss!r}")
        record.update(status="ok", loss=loss, error=None, extra=_jsonable(extra))
    except Exception as e:  # noqa: BLE001 - a failing trial is data, not a crash
        tail = "".join(traceback.format_exception(e)[-3:]).strip()
        record.update(status="fail", loss=None, error=f"{type(e).__name__}: {e}\n{tail}", extra={})
    record["duration_s"] = time.perf_counter() - t0
    record["cpu_s"] = time.process_time() - cpu0
    record["started"] = started
    record["finished"] = time.time()
    return record


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
