"""Ask/tell TPE for one sub-space, rebuilt from its trial records every round.

hyperopt's ``fmin`` owns its loop; a round-based search cannot use it. Instead each round
rebuilds a ``Trials`` object from the sub-space's records (stateless between rounds, so a
resumed search continues exactly where the records end) and asks ``tpe.suggest`` one trial at a
time: past its random start-up trials, ``tpe.suggest`` returns one document per call, and
pending trials in the ``Trials`` count as loss = +inf, which spreads a batch out (a "constant
liar"). Rebuilt documents list *every* label of the space (empty for inactive conditional
ones), which hyperopt's own ``generate_trials_to_calculate`` does not and which conditional
spaces need. Failed trials are stored as DONE with status "fail", which TPE reads as +inf.

Two things hyperopt rebuilds on every call are built once per sub-space and reused (about half
of a ``tpe.suggest`` call, and of the planner's time): the ``Domain`` of a space (shared by
every optimizer of the same space object in this process) and TPE's posterior graph for a
domain. The graph takes the observations through placeholders filled in a fresh memo on each
evaluation, so reusing it changes nothing; ``_suggest`` is hyperopt's own ``tpe.suggest``
function run with the cached builder, whatever hyperopt version is installed, and
tests/unit/shadho/test_tpe_cache.py checks on generated histories that it returns what the
stock ``tpe.suggest`` with a fresh domain returns.
"""

import collections
import functools
import types
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from hyperopt import JOB_STATE_DONE, STATUS_FAIL, STATUS_OK, Domain, Trials, space_eval, tpe
from hyperopt.base import JOB_STATE_NEW


@dataclass(frozen=True)
class Suggestion:
    """One asked trial: hyperopt's id within the sub-space, its raw values, its parameters."""

    tid: int
    vals: dict[str, Any]
    params: dict[str, Any]


def _plain(value: Any) -> Any:
    """numpy scalars to Python ones, recursively (parameters end up in JSON)."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _unused(params: Any) -> float:
    raise RuntimeError("trials are evaluated by the workflow, not by hyperopt")


_DOMAINS_KEPT = 64
_domains: "collections.OrderedDict[int, tuple[Any, Domain]]" = collections.OrderedDict()


def _shared_domain(space: Any) -> Domain:
    """The ``Domain`` of ``space``, built once per space object (spaces are dicts of hyperopt
    expressions: neither hashable nor weakly referable, so the key is ``id(space)``, kept valid
    by holding the space itself; the last ``_DOMAINS_KEPT`` spaces)."""
    entry = _domains.get(id(space))
    if entry is not None and entry[0] is space:
        _domains.move_to_end(id(space))
        return entry[1]
    domain = Domain(_unused, space)
    _domains[id(space)] = (space, domain)
    while len(_domains) > _DOMAINS_KEPT:
        _domains.popitem(last=False)
    return domain


_posteriors: "weakref.WeakKeyDictionary[Domain, dict[tuple[float, float], Any]]" = (
    weakref.WeakKeyDictionary()
)


def _cached_posterior(build: Callable[..., Any]) -> Callable[..., Any]:
    """hyperopt's ``build_posterior_wrapper``, memoised per (domain, prior weight, gamma)."""

    @functools.wraps(build)
    def wrapper(domain: Domain, prior_weight: float, gamma: float) -> Any:
        per_domain = _posteriors.setdefault(domain, {})
        key = (float(prior_weight), float(gamma))
        if key not in per_domain:
            per_domain[key] = build(domain, prior_weight, gamma)
        return per_domain[key]

    return wrapper


def _with_cached_posterior(suggest: Callable[..., Any]) -> Callable[..., Any]:
    """``suggest`` (hyperopt's ``tpe.suggest``) running in a copy of its module's globals
    where ``build_posterior_wrapper`` is memoised; ``suggest`` itself where the installed
    hyperopt builds its posterior some other way."""
    module_globals = suggest.__globals__
    build = module_globals.get("build_posterior_wrapper")
    if build is None or "build_posterior_wrapper" not in suggest.__code__.co_names:
        return suggest
    copy = types.FunctionType(
        suggest.__code__,
        {**module_globals, "build_posterior_wrapper": _cached_posterior(build)},
        suggest.__name__,
        suggest.__defaults__,
        suggest.__closure__,
    )
    copy.__kwdefaults__ = suggest.__kwdefaults__
    return copy


_suggest = _with_cached_posterior(tpe.suggest)


class SubspaceOptimizer:
    """TPE over one sub-space, rebuilt from records ``{tid, vals, status, loss}``."""

    def __init__(
        self,
        space: Any,
        records: Sequence[Mapping[str, Any]] = (),
        n_startup_jobs: int = 5,
    ) -> None:
        self.space = space
        self.domain = _shared_domain(space)
        self.labels = sorted(self.domain.params)
        self.trials = Trials()
        self._suggest = functools.partial(_suggest, n_startup_jobs=n_startup_jobs)
        docs = [self._doc(r) for r in sorted(records, key=lambda r: int(r["tid"]))]
        tids = [d["tid"] for d in docs]
        if len(set(tids)) != len(tids):
            raise ValueError("two records of one sub-space share a trial id")
        if docs:
            self.trials.insert_trial_docs(docs)
        self.trials.refresh()

    def _doc(self, record: Mapping[str, Any]) -> dict[str, Any]:
        tid = int(record["tid"])
        vals = record.get("vals") or {}
        unknown = set(vals) - set(self.labels)
        if unknown:
            raise ValueError(f"record {tid} has values for labels not in the space: {unknown}")
        ok = record.get("status") == "ok"
        pending = record.get("status") == "pending"
        result: dict[str, Any] = (
            {"status": STATUS_OK, "loss": float(record["loss"])}
            if ok
            else {"status": "new"}
            if pending
            else {"status": STATUS_FAIL}
        )
        return {
            "state": JOB_STATE_NEW if pending else JOB_STATE_DONE,
            "tid": tid,
            "spec": None,
            "result": result,
            "misc": {
                "tid": tid,
                "cmd": ("domain_attachment", "FMinIter_Domain"),
                "workdir": None,
                "idxs": {k: [tid] if k in vals else [] for k in self.labels},
                "vals": {k: [vals[k]] if k in vals else [] for k in self.labels},
            },
            "exp_key": None,
            "owner": None,
            "version": 0,
            "book_time": None,
            "refresh_time": None,
        }

    def ask(self, n: int, seed: int) -> list[Suggestion]:
        """``n`` new trials; each is pending (loss +inf) while the next one is asked."""
        rng = np.random.default_rng(seed)
        out = []
        for _ in range(n):
            new_ids = self.trials.new_trial_ids(1)
            docs = self._suggest(new_ids, self.domain, self.trials, int(rng.integers(2**31 - 1)))
            self.trials.insert_trial_docs(docs)
            self.trials.refresh()
            doc = docs[0]
            vals = {k: _plain(v[0]) for k, v in doc["misc"]["vals"].items() if v}
            params = _plain(space_eval(self.space, vals))
            out.append(Suggestion(int(doc["tid"]), vals, params))
        return out

    def tell(self, tid: int, loss: "float | None") -> None:
        """Record a result (``None``: the trial failed)."""
        for doc in self.trials._dynamic_trials:
            if doc["tid"] == tid:
                doc["state"] = JOB_STATE_DONE
                doc["result"] = (
                    {"status": STATUS_OK, "loss": float(loss)}
                    if loss is not None
                    else {"status": STATUS_FAIL}
                )
                self.trials.refresh()
                return
        raise KeyError(f"no trial {tid} in this sub-space")

    def best(self) -> "tuple[float, dict[str, Any]] | None":
        """The lowest loss so far and its parameters, or None before any success."""
        ok = [t for t in self.trials.trials if t["result"].get("status") == STATUS_OK]
        if not ok:
            return None
        top = min(ok, key=lambda t: t["result"]["loss"])
        vals = {k: v[0] for k, v in top["misc"]["vals"].items() if v}
        return float(top["result"]["loss"]), _plain(space_eval(self.space, vals))
