"""Search spaces: the declarative (YAML/JSON) form, exclusive nodes, and the split into sub-spaces.

A search space is a tree. Leaves are hyperopt domains (``hp.uniform(...)`` and friends) or
constants; inner nodes are dicts. A node made with :func:`exclusive` (``exclusive:`` in a
config) is an *exclusive choice*: exactly one of its options is active. Exclusive nodes split
the tree into independent **sub-spaces** (SHADHO's "trees"): a dict's sub-spaces are the
cartesian product of its children's, an exclusive node's are the union of its options'. A plain
``hp.choice`` (``choice:`` in a config) never splits: it stays one categorical dimension.

Each sub-space records which option it took at every exclusive node as a constant under that
node's key, so the objective can tell, for example, which kernel to fit.
"""

import difflib
import itertools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hyperopt import hp
from hyperopt.pyll import Apply

from ._errors import SpecError

NAME_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
"""Sub-space and option names: they become file names and Snakemake wildcard values."""

RESERVED_CLASSES_KEY = "_classes"
"""Key of an exclusive option that restricts its sub-spaces to some hardware classes."""


@dataclass(frozen=True)
class Exclusive:
    """An exclusive choice between named options; each option becomes its own sub-space(s)."""

    options: Mapping[str, Any]


def exclusive(options: Mapping[str, Any]) -> Exclusive:
    """Mark a choice whose options are searched as separate sub-spaces.

    >>> from hyperopt import hp
    >>> space = {"kernel": exclusive({"linear": {"C": hp.loguniform("C", -3, 3)},
    ...                               "rbf": {"C": hp.loguniform("C", -3, 3),
    ...                                       "gamma": hp.loguniform("gamma", -9, 0)}})}
    >>> sorted(split_space(space))
    ['linear', 'rbf']
    """
    return Exclusive(dict(options))


@dataclass(frozen=True)
class SubSpace:
    """One leaf of the split tree: a hyperopt space (a dict) with its own optimiser state."""

    name: str
    space: dict[str, Any]
    classes: tuple[str, ...] = ()
    """Hardware classes allowed to run it; empty means every class."""


_DOMAINS = ("uniform", "loguniform", "quniform", "qloguniform", "normal", "randint", "choice")


def _number(key: str, value: Any) -> float:
    if isinstance(value, str):  # YAML 1.1 reads 1e-4 (no dot) as a string
        try:
            value = float(value)
        except ValueError:
            pass
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise SpecError(key, f"expected a finite number, got {value!r}")
    return float(value)


def _bounds(key: str, args: Any, n: int) -> list[float]:
    if not isinstance(args, list | tuple) or len(args) != n:
        raise SpecError(key, f"expected a list of {n} numbers, got {args!r}")
    return [_number(f"{key}[{i}]", v) for i, v in enumerate(args)]


def domain_from_config(key: str, kind: str, args: Any, path: str = "") -> Apply:
    """One hyperopt domain from its declarative form; ``key`` is also its hyperopt label.

    Bounds are in the parameter's own units: ``loguniform: [1e-4, 10]`` samples between 1e-4
    and 10 (hyperopt's ``hp.loguniform`` takes natural-log bounds; this converts). ``path``
    (default: ``key``) is where the domain sits in the spec, for error messages.
    """
    where = f"{path or key}.{kind}"
    if kind in ("uniform", "loguniform", "quniform", "qloguniform"):
        q = kind.startswith("q")
        values = _bounds(where, args, 3 if q else 2)
        low, high = values[0], values[1]
        if not low < high:
            raise SpecError(
                where,
                f"lower bound {low:g} is not below upper bound {high:g}",
                "Write [low, high] with low < high.",
            )
        if q and values[2] <= 0:
            raise SpecError(where, f"step q={values[2]:g} must be positive")
        if "log" in kind:
            if low <= 0:
                raise SpecError(
                    where,
                    f"a log-uniform range must be positive, got low={low:g}",
                    "Use uniform for ranges that include 0 or negatives.",
                )
            low, high = math.log(low), math.log(high)
        if kind == "uniform":
            return hp.uniform(key, low, high)
        if kind == "loguniform":
            return hp.loguniform(key, low, high)
        if kind == "quniform":
            return hp.quniform(key, low, high, values[2])
        return hp.qloguniform(key, low, high, values[2])
    if kind == "normal":
        mu, sigma = _bounds(where, args, 2)
        if sigma <= 0:
            raise SpecError(where, f"sigma={sigma:g} must be positive")
        return hp.normal(key, mu, sigma)
    if kind == "randint":
        low, high = _bounds(where, args, 2)
        if low != int(low) or high != int(high) or not low < high:
            raise SpecError(
                where,
                f"expected integers low < high, got [{low:g}, {high:g}]",
                "randint samples low, ..., high - 1.",
            )
        return hp.randint(key, int(low), int(high))
    if kind == "choice":
        if not isinstance(args, list | tuple) or not args:
            raise SpecError(where, "a choice needs at least one option", "List the options.")
        return hp.choice(
            key, [space_from_config(v, f"{key}[{i}]", f"{key}[{i}]") for i, v in enumerate(args)]
        )
    raise SpecError(key, f"unknown domain {kind!r}", f"Use one of: {', '.join(_DOMAINS)}.")


def space_from_config(node: Any, key: str = "space", label: str = "") -> Any:
    """Turn the declarative form of a space (plain dicts and lists, e.g. from YAML) into
    hyperopt expressions and :class:`Exclusive` nodes.

    A dict with the single key ``exclusive`` is an exclusive choice; a dict with a single
    domain key (``uniform``, ``loguniform``, ``quniform``, ``qloguniform``, ``normal``,
    ``randint``, ``choice``) is a domain labelled by its dotted path; other dicts nest; anything
    else is a constant. ``key`` is the dotted path used in error messages; ``label`` the path
    used as hyperopt label (an exclusive option's keys merge into the dict around it, so option
    names are not part of labels: ``C`` in every SVM kernel's sub-space is labelled ``C``).
    """
    if isinstance(node, Mapping):
        if len(node) == 1:
            ((kind, args),) = node.items()
            if kind == "exclusive":
                if not isinstance(args, Mapping) or not args:
                    raise SpecError(
                        f"{key}.exclusive",
                        "an exclusive choice needs options",
                        "Give a mapping of option name to sub-space.",
                    )
                parent = label.rpartition(".")[0]
                return Exclusive(
                    {
                        str(name): space_from_config(option, f"{key}.{name}", parent)
                        for name, option in args.items()
                    }
                )
            if kind in _DOMAINS:
                return domain_from_config(label or key, kind, args, key)
            near = difflib.get_close_matches(str(kind), [*_DOMAINS, "exclusive"], n=1, cutoff=0.8)
            if near and isinstance(args, list | Mapping):
                # {logunifrom: [1e-4, 1]} is a typo, not a constant dict to pass as it is.
                raise SpecError(
                    f"{key}.{kind}",
                    f"unknown domain {kind!r}",
                    f"Did you mean {near[0]}? Domains: {', '.join(_DOMAINS)}.",
                )
        return {
            str(k): (
                v
                if k == RESERVED_CLASSES_KEY
                else space_from_config(v, f"{key}.{k}", f"{label}.{k}" if label else str(k))
            )
            for k, v in node.items()
        }
    return node


def split_space(space: Any, key: str = "space") -> dict[str, SubSpace]:
    """Split a space at its exclusive nodes into named sub-spaces.

    Sub-space names join the option names taken, outer first, with ``-`` (``svm-rbf``); a tree
    without exclusive nodes is one sub-space named ``all``.
    """
    if isinstance(space, Exclusive):
        space = {"choice": space}  # a root-level choice records its option under "choice"
    leaves = _split(space, key)
    result: dict[str, SubSpace] = {}
    for names, leaf, classes in leaves:
        name = "-".join(names) or "all"
        if name in result:
            raise SpecError(
                key,
                f"two sub-spaces are both named {name!r}",
                "Rename an option of an exclusive choice.",
            )
        if not isinstance(leaf, dict):
            leaf = {"value": leaf}
        result[name] = SubSpace(name, leaf, tuple(classes))
    return result


_Leaf = tuple[list[str], Any, list[str]]


def _split(node: Any, key: str) -> list[_Leaf]:
    if isinstance(node, Exclusive):
        if not node.options:
            raise SpecError(key, "an exclusive choice has no options", "Give at least one.")
        out: list[_Leaf] = []
        for name, option in node.options.items():
            where = f"{key}.{name}"
            if not NAME_PATTERN.match(name):
                raise SpecError(
                    where,
                    f"option name {name!r} is not a plain identifier",
                    "Use letters, digits and _ (it becomes a file name).",
                )
            classes = _option_classes(option, where)
            if isinstance(option, Mapping):
                option = {k: v for k, v in option.items() if k != RESERVED_CLASSES_KEY}
            for names, leaf, inner in _split(option, where):
                chosen = {"__choice__": name, "__value__": leaf}
                out.append(([name, *names], chosen, inner or classes))
        return out
    if isinstance(node, Mapping):
        if RESERVED_CLASSES_KEY in node:
            raise SpecError(
                f"{key}.{RESERVED_CLASSES_KEY}",
                "only an option of an exclusive choice can restrict classes",
            )
        parts = [[(k, leaf) for leaf in _split(v, f"{key}.{k}")] for k, v in node.items()]
        out = []
        for combo in itertools.product(*parts):
            names = []
            classes = []
            leaf_dict: dict[str, Any] = {}
            for k, (child_names, child, child_classes) in combo:
                names += child_names
                classes = _intersect(classes, child_classes, key)
                if isinstance(child, dict) and "__choice__" in child:
                    leaf_dict[k] = child["__choice__"]
                    inner = child["__value__"]
                    if isinstance(inner, dict):
                        for ik, iv in inner.items():
                            if ik in leaf_dict:
                                raise SpecError(
                                    f"{key}.{k}.{ik}", f"key {ik!r} clashes with a sibling of {k!r}"
                                )
                            leaf_dict[ik] = iv
                    elif inner is not None:
                        leaf_dict[f"{k}_value"] = inner
                else:
                    leaf_dict[k] = child
            out.append((names, leaf_dict, classes))
        return out
    return [([], node, [])]


def _intersect(a: list[str], b: list[str], key: str) -> list[str]:
    if not a:
        return list(b)
    if not b:
        return list(a)
    both = [c for c in a if c in b]
    if not both:
        raise SpecError(key, f"nested class restrictions {a} and {b} leave no class")
    return both


def _option_classes(option: Any, key: str) -> list[str]:
    if not isinstance(option, Mapping) or RESERVED_CLASSES_KEY not in option:
        return []
    classes = option[RESERVED_CLASSES_KEY]
    if isinstance(classes, str):
        classes = [classes]
    if not isinstance(classes, list | tuple) or not classes:
        raise SpecError(f"{key}.{RESERVED_CLASSES_KEY}", "expected a non-empty list of classes")
    return [str(c) for c in classes]
