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

from ._complexity import domain_term, domain_terms, log_complexity
from ._costmodel import predict_costs
from ._errors import ShadhoError, SpecError, StoreError
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
from ._rounds import compute_stats, merge_round, plan_round, trial_name
from ._space import Exclusive, SubSpace, exclusive, space_from_config, split_space
from ._spec import SearchSpec, load_spec, make_spec
from ._speeds import SpeedEstimate, estimate_speeds, measured_classes, slower_than_declared
from ._store import read_json, read_jsonl, write_json, write_jsonl, write_text_atomic
from ._tpe import SubspaceOptimizer, Suggestion
from ._trial import evaluate, load_objective

__all__ = [
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
    "assign_blocks",
    "assign_classes",
    "best_loss_spread",
    "borda_order",
    "borda_scores",
    "by_speed",
    "check_requirements",
    "compute_stats",
    "domain_term",
    "domain_terms",
    "estimate_speeds",
    "evaluate",
    "exclusive",
    "incumbent",
    "load_objective",
    "load_spec",
    "log_complexity",
    "make_spec",
    "measured_classes",
    "merge_round",
    "missing_requirements",
    "parse_hardware",
    "place_trials",
    "plan_round",
    "predict_costs",
    "planck_weights",
    "rank_subspaces",
    "read_json",
    "read_jsonl",
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
