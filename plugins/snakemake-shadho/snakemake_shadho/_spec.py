"""The search spec: sub-spaces, hardware classes and search settings, validated up front.

Every user error is a :class:`SpecError` naming the offending key, raised before any trial
runs: an empty choice, bounds in the wrong order, a sub-space restricted to an undeclared
hardware class, a misspelt setting.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

from ._errors import SpecError
from ._hardware import HardwareClass, parse_hardware
from ._space import SubSpace, space_from_config, split_space

_SETTINGS: dict[str, Any] = {
    "seed": 0,
    "rounds": 4,
    "trials_per_round": 8,
    "rerank_every": None,
    "n_startup_jobs": 5,
    "min_results": 3,
    "planck_lambda": 0.5,
    "objective": None,
    "sticky_template": None,
    "objective_args": None,
    "explore_fraction": 0.25,
    "pipeline_depth": 1,
    "duration_aware_split": False,
    "requires": None,
    "execution": "rounds",
    "max_failed_trials": 0,
}
EXECUTIONS = ("rounds", "async")


@dataclass(frozen=True)
class SearchSpec:
    """A validated search: what to search (sub-spaces), where (classes), and how long.

    ``rerank_every`` is K: sub-spaces are re-ranked once K trials have been decided since the
    last ranking, finished or still running (checked at every plan; :func:`.ranking_due`).
    By default K is ``trials_per_round``, so every round (and every asynchronous plan) is
    planned on a fresh ranking. The paper's K = 10 with rounds of 8 re-ranked every other
    round: on the real run's cluster (bench/shadho_quality.py, 20 seeds of 48 trials) the CNN
    then got 9 trials instead of 17 and the best loss was worse than plain TPE's in 15 of 20
    seeds.
    ``n_startup_jobs`` is TPE's number of random trials per sub-space before it models.
    ``min_results`` is how many successful results a sub-space needs, at most, before its
    performance and uncertainty count in the ranking: the floor is budget-aware
    (:attr:`explore_floor`), at most ``explore_fraction`` of the budget goes to these forced
    exploration trials.

    ``pipeline_depth`` is how many rounds are in flight at once: round r is planned from the
    results of round r - depth, with the trials of the rounds in between as pending (1: every
    round waits for the previous one, a barrier). ``duration_aware_split`` lets measured
    durations decide which sub-spaces get a round's trials (off: they only decide where trials
    run, so a seed gives the same search whatever the timings). ``requires`` maps a sub-space
    (or ``"*"`` for all) to the Python modules its objective imports, each with the pip
    requirement that provides it; a missing one stops the search before any trial.
    ``execution`` is ``rounds`` (Snakemake jobs, round by round, ``pipeline_depth`` in flight)
    or ``async`` (one long-running driver, :mod:`._driver`: a worker that frees takes its
    class's next trial, no rounds; ``rounds x trials_per_round`` is then only the budget).
    """

    subspaces: dict[str, SubSpace]
    classes: dict[str, HardwareClass]
    seed: int = 0
    rounds: int = 4
    trials_per_round: int = 8
    rerank_every: int = 8
    n_startup_jobs: int = 5
    min_results: int = 3
    planck_lambda: float = 0.5
    objective: Optional[str] = None
    sticky_template: Optional[str] = None
    objective_args: dict[str, Any] = field(default_factory=dict)
    explore_fraction: float = 0.25
    pipeline_depth: int = 1
    duration_aware_split: bool = False
    requires: dict[str, dict[str, str]] = field(default_factory=dict)
    execution: str = "rounds"
    max_failed_trials: int = 0
    """Trials that may fail with an error the objective does not declare before the run
    fails (:mod:`._failures`); declared failures (``TrialFailed``, a non-finite loss) are
    results and never count."""

    @property
    def explore_floor(self) -> int:
        """Trials every sub-space gets before the ranking judges it: ``min_results``, less when
        the budget is small (at most ``explore_fraction`` of the budget, at least 1 each).

        24 trials over 5 sub-spaces: 1 each (5 forced trials, not 15)."""
        share = int(self.explore_fraction * self.budget / max(len(self.subspaces), 1))
        return max(1, min(self.min_results, share))

    @property
    def budget(self) -> int:
        """Total number of trials: rounds times trials per round."""
        return self.rounds * self.trials_per_round

    def classes_of(self, subspace: str) -> list[str]:
        """Classes allowed to run a sub-space, in declaration order."""
        allowed = self.subspaces[subspace].classes
        return [c for c in self.classes if not allowed or c in allowed]


def _int_setting(key: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise SpecError(key, f"expected an integer >= {minimum}, got {value!r}")
    return value


def make_spec(space: Any, hardware: Mapping[str, HardwareClass], **settings: Any) -> SearchSpec:
    """A spec from a space already made of hyperopt expressions (the Python API)."""
    subspaces = split_space(space)
    for sub in subspaces.values():
        for cls in sub.classes:
            if cls not in hardware:
                raise SpecError(
                    f"space.{sub.name}._classes",
                    f"unknown hardware class {cls!r}",
                    f"Declared classes: {', '.join(hardware)}.",
                )
    for hw in hardware.values():
        if not any(not sub.classes or hw.name in sub.classes for sub in subspaces.values()):
            raise SpecError(
                f"hardware.{hw.name}",
                f"no sub-space may run on class {hw.name!r} (each one's _classes leaves it out), "
                "so its workers would wait for the whole search",
                f"Add {hw.name} to a sub-space's _classes, or remove the class.",
            )
        for sname, _ in hw.speed_by_subspace:
            if sname not in subspaces:
                raise SpecError(
                    f"hardware.{hw.name}.speed_by_subspace.{sname}",
                    f"unknown sub-space {sname!r}",
                    f"Sub-spaces: {', '.join(subspaces)}.",
                )
    unknown = sorted(set(settings) - set(_SETTINGS))
    if unknown:
        raise SpecError(
            unknown[0], "unknown search setting", f"Known settings: {', '.join(sorted(_SETTINGS))}."
        )
    values = {**_SETTINGS, **settings}
    if values["rerank_every"] is None:
        values["rerank_every"] = values["trials_per_round"]
    for key, minimum in (
        ("rounds", 1),
        ("trials_per_round", 1),
        ("rerank_every", 1),
        ("n_startup_jobs", 1),
        ("min_results", 2),
        ("seed", 0),
        ("pipeline_depth", 1),
        ("max_failed_trials", 0),
    ):
        values[key] = _int_setting(key, values[key], minimum)
    fraction = values["explore_fraction"]
    if (
        isinstance(fraction, bool)
        or not isinstance(fraction, int | float)
        or not 0 <= fraction <= 1
    ):
        raise SpecError("explore_fraction", f"expected a number in [0, 1], got {fraction!r}")
    values["explore_fraction"] = float(fraction)
    if not isinstance(values["duration_aware_split"], bool):
        raise SpecError(
            "duration_aware_split",
            f"expected true or false, got {values['duration_aware_split']!r}",
        )
    values["requires"] = _requires(values["requires"], subspaces)
    if values["execution"] not in EXECUTIONS:
        raise SpecError(
            "execution",
            f"expected one of {', '.join(EXECUTIONS)}, got {values['execution']!r}",
            "rounds: Snakemake jobs round by round; async: one driver, no rounds.",
        )
    lam = values["planck_lambda"]
    if isinstance(lam, bool) or not isinstance(lam, int | float) or lam <= 0:
        raise SpecError("planck_lambda", f"expected a positive number, got {lam!r}")
    values["objective_args"] = dict(values["objective_args"] or {})
    return SearchSpec(subspaces=subspaces, classes=dict(hardware), **values)


def _requires(value: Any, subspaces: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """``requires:`` as {sub-space or "*": {module: pip requirement}}; a list of modules means
    each is installed under its own name."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise SpecError(
            "requires",
            f"expected a mapping of sub-space to modules, got {value!r}",
            "For example requires: {cnn: {torch: torch}}.",
        )
    out: dict[str, dict[str, str]] = {}
    for sub, modules in value.items():
        if sub != "*" and sub not in subspaces:
            raise SpecError(
                f"requires.{sub}",
                f"unknown sub-space {sub!r}",
                f"Sub-spaces: {', '.join(subspaces)} (or * for all).",
            )
        if isinstance(modules, str):
            modules = [modules]
        if isinstance(modules, list | tuple):
            modules = {str(m): str(m) for m in modules}
        if not isinstance(modules, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) and k and v for k, v in modules.items()
        ):
            raise SpecError(
                f"requires.{sub}",
                f"expected a list of modules or a mapping of module to pip requirement, "
                f"got {modules!r}",
            )
        out[str(sub)] = dict(modules)
    return out


def load_spec(config: Mapping[str, Any], key: str = "hpo") -> SearchSpec:
    """A spec from its config form (the ``hpo:`` entry of a Snakemake config or profile).

    ``space`` is the declarative space (see :func:`space_from_config`), ``hardware`` the
    classes; every other key is a setting of :class:`SearchSpec`.
    """
    if config is None:
        raise SpecError(
            key,
            "the config has no search",
            f"Add a {key}: mapping to the workflow's config (a configfile: or --configfile; "
            "workflows/hpo-digits/config/config.yaml is an example).",
        )
    if not isinstance(config, Mapping):
        raise SpecError(key, f"expected a mapping, got {type(config).__name__}")
    if "space" not in config:
        raise SpecError(f"{key}.space", "no search space is given", "Add a space: entry.")
    settings = {k: v for k, v in config.items() if k not in ("space", "hardware")}
    try:
        hardware = parse_hardware(config.get("hardware"), f"{key}.hardware")
        space = space_from_config(config["space"], f"{key}.space")
        return make_spec(space, hardware, **settings)
    except SpecError as e:
        if e.key.startswith(f"{key}."):
            raise
        raise SpecError(f"{key}.{e.key}", e.problem, e.fix) from None
