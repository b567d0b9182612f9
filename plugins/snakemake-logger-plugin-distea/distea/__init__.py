"""DISTEA: post-hoc impact analysis of Snakemake runs, across processes.

Record (opt-in): ``--logger distea`` for jobs and files, ``DISTEA_TRACE=DIR`` for functions and
sticky-executor messages. Ask: which functions, jobs and outputs does a change impact, and why?

>>> from distea import analyse, Change                                  # doctest: +SKIP
>>> result = analyse("traces/", [Change.parse("func:wflib.text.normalize")])  # doctest: +SKIP

The tracer (:mod:`distea.tracer`) imports nothing beyond the standard library, so traced
processes stay light; the analysis needs the ``impact`` extra (networkx, numpy, matplotlib).
"""

from pathlib import Path
from typing import TYPE_CHECKING

from ._schema import SCHEMA_VERSION, job_key

if TYPE_CHECKING:
    from ._model import Trace
    from ._order import Order
    from ._query import Change, ImpactResult

__all__ = [
    "SCHEMA_VERSION",
    "Change",
    "ChangeSyntaxError",
    "ImpactResult",
    "LogFormatError",
    "analyse",
    "build_order",
    "impact",
    "job_key",
    "load",
    "read_logs",
]


def __getattr__(name: str) -> object:
    # The analysis side is imported lazily: traced processes import only distea.tracer.
    if name in ("Change", "ChangeSyntaxError", "ImpactResult", "impact"):
        from . import _query

        return getattr(_query, name)
    if name in ("LogFormatError", "read_logs"):
        from . import _parse

        return getattr(_parse, name)
    if name == "build_order":
        from ._order import build_order

        return build_order
    raise AttributeError(f"module 'distea' has no attribute {name!r}")


def analyse(logs: "str | Path", changes: "list[Change]") -> "ImpactResult":
    """Read the logs under ``logs`` and return the impact set of ``changes``."""
    from ._order import build_order
    from ._parse import read_logs
    from ._query import impact

    return impact(build_order(read_logs(logs)), changes)


def load(logs: "str | Path") -> "tuple[Trace, Order]":
    """Read and order the logs once, for several queries."""
    from ._order import build_order
    from ._parse import read_logs

    trace = read_logs(logs)
    return trace, build_order(trace)
