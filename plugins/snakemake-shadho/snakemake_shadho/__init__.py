"""shadho: hardware-aware hyperparameter search (SHADHO) as rounds of Snakemake jobs.

A search spec splits a hyperopt space at its exclusive choices into sub-spaces (one per SVM
kernel, one per model family...), each with its own trial history and its own TPE, asked in
rounds. Sub-spaces are ranked by complexity, performance and uncertainty and assigned to
declared hardware classes (most complex and promising to the fastest); each round's trials are
split across classes to balance their predicted finish times. ``rules/hpo.smk`` turns rounds
into Snakemake jobs that carry each class's resources (Slurm partition, gres, cpus, memory).

Typical use from Python::

    spec = shadho.load_spec(config["hpo"])
    plan = shadho.plan_round(spec, 0, history=[])
    ...  # run plan["trials"], each with shadho.evaluate(objective, trial)
    history = shadho.merge_round([], plan, results)
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._async import AsyncSearch
    from ._complexity import domain_term, domain_terms, log_complexity
    from ._costmodel import predict_costs
    from ._errors import ShadhoError, SpecError, StoreError, TrialFailed, TrialsFailedError
    from ._failures import check_failures, failure_summary
    from ._hardware import HardwareClass, by_speed, parse_hardware
    from ._ranking import (
        SubspaceStats,
        assign_blocks,
        assign_classes,
        best_loss_spread,
        borda_order,
        borda_scores,
        incumbent,
        place_trials,
        planck_weights,
        rank_subspaces,
        split_round,
        subspace_stats,
    )
    from ._requirements import check_requirements, missing_requirements
    from ._rounds import compute_stats, merge_round, plan_round, ranking_due, trial_name
    from ._space import Exclusive, SubSpace, exclusive, space_from_config, split_space
    from ._spec import SearchSpec, load_spec, make_spec
    from ._speeds import SpeedEstimate, estimate_speeds, measured_classes, slower_than_declared
    from ._store import read_json, read_jsonl, write_json, write_jsonl, write_text_atomic
    from ._tpe import SubspaceOptimizer, Suggestion
    from ._trial import evaluate, load_objective, objective_problem, run_trial

# Names are imported on first use (PEP 562): `python -m snakemake_shadho merge` then starts in
# a fraction of a second instead of importing hyperopt, which is bookkeeping time between
# rounds.
_EXPORTS = {
    "AsyncSearch": "._async",
    "Exclusive": "._space",
    "HardwareClass": "._hardware",
    "SearchSpec": "._spec",
    "ShadhoError": "._errors",
    "SpecError": "._errors",
    "SpeedEstimate": "._speeds",
    "StoreError": "._errors",
    "SubSpace": "._space",
    "SubspaceOptimizer": "._tpe",
    "SubspaceStats": "._ranking",
    "TrialFailed": "._errors",
    "TrialsFailedError": "._errors",
    "Suggestion": "._tpe",
    "assign_blocks": "._ranking",
    "assign_classes": "._ranking",
    "best_loss_spread": "._ranking",
    "borda_order": "._ranking",
    "borda_scores": "._ranking",
    "by_speed": "._hardware",
    "check_requirements": "._requirements",
    "check_failures": "._failures",
    "compute_stats": "._rounds",
    "domain_term": "._complexity",
    "domain_terms": "._complexity",
    "estimate_speeds": "._speeds",
    "evaluate": "._trial",
    "exclusive": "._space",
    "failure_summary": "._failures",
    "incumbent": "._ranking",
    "load_objective": "._trial",
    "load_spec": "._spec",
    "log_complexity": "._complexity",
    "make_spec": "._spec",
    "measured_classes": "._speeds",
    "objective_problem": "._trial",
    "merge_round": "._history",
    "missing_requirements": "._requirements",
    "parse_hardware": "._hardware",
    "place_trials": "._ranking",
    "plan_round": "._rounds",
    "planck_weights": "._ranking",
    "predict_costs": "._costmodel",
    "rank_subspaces": "._ranking",
    "ranking_due": "._rounds",
    "read_json": "._store",
    "read_jsonl": "._store",
    "run_trial": "._trial",
    "slower_than_declared": "._speeds",
    "space_from_config": "._space",
    "split_round": "._ranking",
    "split_space": "._space",
    "subspace_stats": "._ranking",
    "trial_name": "._rounds",
    "write_json": "._store",
    "write_jsonl": "._store",
    "write_text_atomic": "._store",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_EXPORTS])


__all__ = [
    "AsyncSearch",
    "Exclusive",
    "HardwareClass",
    "SearchSpec",
    "ShadhoError",
    "SpecError",
    "StoreError",
    "SubSpace",
    "SubspaceOptimizer",
    "SpeedEstimate",
    "SubspaceStats",
    "Suggestion",
    "TrialFailed",
    "TrialsFailedError",
    "assign_blocks",
    "assign_classes",
    "best_loss_spread",
    "borda_order",
    "borda_scores",
    "by_speed",
    "check_failures",
    "check_requirements",
    "compute_stats",
    "domain_term",
    "domain_terms",
    "estimate_speeds",
    "evaluate",
    "exclusive",
    "failure_summary",
    "incumbent",
    "load_objective",
    "load_spec",
    "log_complexity",
    "make_spec",
    "measured_classes",
    "objective_problem",
    "merge_round",
    "missing_requirements",
    "parse_hardware",
    "place_trials",
    "plan_round",
    "predict_costs",
    "planck_weights",
    "rank_subspaces",
    "ranking_due",
    "read_json",
    "read_jsonl",
    "run_trial",
    "slower_than_declared",
    "space_from_config",
    "split_round",
    "split_space",
    "subspace_stats",
    "trial_name",
    "write_json",
    "write_jsonl",
    "write_text_atomic",
]
