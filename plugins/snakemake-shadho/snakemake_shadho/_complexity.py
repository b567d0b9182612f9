"""Complexity: a static size measure of a sub-space, from the kinds and widths of its domains.

Per domain d (SHADHO's terms, with the reference code's p = 0.999 central interval)::

    continuous, width w          c_d = 2 + w
    discrete with n values       c_d = 2 - 1/n
    constant                     c_d = 1

A sub-space's complexity is the product of its domains' terms; we work with its natural log,
``log C = sum_d log c_d``, which cannot overflow. Widths are measured in the units hyperopt
samples in: ``uniform(a, b)`` has w = b - a; ``loguniform`` and ``qloguniform`` have w =
ln(high) - ln(low) (natural-log exponent units, so a range of 1e-4..10 has w = ln 1e5 = 11.51);
``normal``/``lognormal`` (and their q-variants) have w = 2 * 3.2905 * sigma, the central 99.9%
interval. ``quniform(a, b, q)`` is discrete with n = floor((b - a) / q) + 1 values;
``randint(a, b)`` has n = b - a; ``choice`` (categorical) has n = number of options.
"""

import math
from typing import Any

from hyperopt.pyll import as_apply
from hyperopt.pyll_utils import expr_to_config

Z_999 = 3.2905267314919255
"""Half-width, in standard deviations, of the central 99.9% interval of a normal."""


def _arg(node: Any, name: str) -> Any:
    value = node.arg.get(name)
    return getattr(value, "obj", value)


def domain_term(kind: str, args: dict[str, Any]) -> float:
    """``c_d`` of one hyperopt domain (its pyll node name and literal arguments).

    >>> domain_term("uniform", {"low": -1.0, "high": 1.0})
    4.0
    >>> domain_term("randint", {"low": 2, "high": 6})
    1.75
    """
    if kind in ("uniform", "loguniform", "qloguniform"):
        return 2.0 + abs(float(args["high"]) - float(args["low"]))
    if kind == "quniform":
        n = math.floor((float(args["high"]) - float(args["low"])) / float(args["q"])) + 1
        return 2.0 - 1.0 / n
    if kind in ("normal", "lognormal", "qnormal", "qlognormal"):
        return 2.0 + 2.0 * Z_999 * abs(float(args["sigma"]))
    if kind == "randint":
        high = args.get("high")
        n = int(args["low"]) if not isinstance(high, int | float) else int(high) - int(args["low"])
        return 2.0 - 1.0 / n if n > 0 else 1.0
    if kind == "categorical":
        p = args.get("p")
        n = len(p) if isinstance(p, list | tuple) else int(args.get("upper") or 1)
        return 2.0 - 1.0 / n if n > 0 else 1.0
    raise ValueError(f"no complexity term for hyperopt domain {kind!r}")


def domain_terms(space: Any) -> dict[str, float]:
    """``c_d`` of every hyperopt domain in a space, by label (constants have none: c = 1)."""
    found: dict[str, Any] = {}
    expr_to_config(as_apply(space), (True,), found)
    terms = {}
    for label, entry in found.items():
        node = entry["node"]
        args = {name: _arg(node, name) for name in node.arg}
        terms[label] = domain_term(node.name, args)
    return terms


def log_complexity(space: Any) -> float:
    """``log C`` of a sub-space: the sum of ``log c_d`` over its domains.

    >>> from hyperopt import hp
    >>> round(log_complexity({"kernel": "rbf", "x": hp.uniform("x", 0, 2)}), 4)
    1.3863
    """
    return sum(math.log(t) for t in domain_terms(space).values())
