r"""Measured hardware: each class's speed per sub-space, learned from observed trial durations.

Declared speeds (``speed``, ``speed_by_subspace``) are priors. The model, in log units: a
successful trial of sub-space s on class c lasts

.. math:: \log d = \mu_s - \lambda_{c,s} + \varepsilon

where :math:`\mu_s` is the sub-space's typical log duration on a speed-1 worker and
:math:`\lambda_{c,s}` the class's log speed on s. The prior is
:math:`\lambda_{c,s} \sim N(\log v^{decl}_{c,s} + r_c, \cdot)`, worth ``prior_weight``
observations, where :math:`r_c` (the class's log measured/declared ratio, pooled over every
sub-space it ran, itself shrunk to 0 by ``prior_weight``) carries what one sub-space revealed
about a class to the sub-spaces it has not run yet. :math:`\mu` and :math:`\lambda` are fitted
by alternating means (a few sweeps converge on these tiny problems).

Only *relative* speeds are identified, and only through sub-spaces that ran on two classes or
more; a sub-space seen on one class only keeps that class's prior there (its :math:`\mu_s`
absorbs the durations). The assignment (:func:`._ranking.assign_blocks`) makes adjacent
classes share a sub-space for this reason.

What it does not model: the configurations run on each class differ (the planner sends the
trials it predicts longest to the fastest class), so a class's mean log duration on a sub-space
would be biased towards slower. So :math:`\mu_s` is not a constant but a ridge regression on the
configuration's coordinates (``features``; the planner passes the unit-cube coordinates of
:mod:`._costmodel`): a class is compared with another on what its trials would have cost.

Everything here is pure: records in, estimates out (no processes, no clocks).
"""

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Optional

import numpy as np

from ._hardware import HardwareClass

SLOWER_THAN_DECLARED = 0.5
"""A class whose measured/declared speed ratio falls below this is reported as slower than
declared."""


@dataclass(frozen=True)
class SpeedEstimate:
    """A class's speed on one sub-space: declared (the prior), measured, and the evidence."""

    hw_class: str
    subspace: str
    declared: float
    measured: float
    trials: int

    @property
    def ratio(self) -> float:
        """Measured over declared speed (< 1: slower than declared)."""
        return self.measured / self.declared


Features = Callable[[Mapping[str, Any]], Sequence[float]]


def _observations(
    history: Sequence[Mapping[str, Any]],
    classes: Mapping[str, HardwareClass],
    subspaces: Sequence[str],
    features: Optional[Features],
) -> list[tuple[str, str, float, tuple[float, ...]]]:
    out = []
    for r in history:
        d = r.get("duration_s")
        c, s = r.get("hw_class"), r.get("subspace")
        if r.get("status") != "ok" or d is None or c not in classes or s not in subspaces:
            continue
        d = float(d)
        if not (d > 0 and math.isfinite(d)):
            continue
        x = tuple(float(v) for v in features(r)) if features is not None else ()
        out.append((str(c), str(s), math.log(d), x))
    return out


def estimate_speeds(
    classes: Mapping[str, HardwareClass],
    subspaces: Sequence[str],
    history: Sequence[Mapping[str, Any]],
    prior_weight: float = 1.0,
    features: Optional[Features] = None,
    ridge: float = 0.01,
    sweeps: int = 30,
) -> dict[tuple[str, str], SpeedEstimate]:
    """Every (class, sub-space)'s speed estimate from the successful records in ``history``.

    ``features(record)``, when given, are the record's configuration as numbers (the planner
    passes its unit-cube coordinates): each sub-space's log duration on a speed-1 worker is
    then a ridge regression on them (penalty ``ridge``) instead of a constant, so a class that
    was sent the costly configurations is not taken for a slow one. A sub-space with fewer than
    two trials per coefficient keeps a constant (slopes would fit its few points exactly).

    Deterministic: the same records give the same estimates, in any order.
    """
    obs = sorted(_observations(history, classes, subspaces, features))
    prior = {(c, s): math.log(classes[c].speed_of(s)) for c in classes for s in subspaces}
    lam = dict(prior)
    ratio = dict.fromkeys(classes, 0.0)
    by_sub: dict[str, list[tuple[str, float, tuple[float, ...]]]] = {}
    for c, s, y, x in obs:
        by_sub.setdefault(s, []).append((c, y, x))
    counts: dict[tuple[str, str], int] = {}
    for c, s, _, _ in obs:
        counts[(c, s)] = counts.get((c, s), 0) + 1
    # Given the speeds, each sub-space's reference log duration is a function of the
    # configuration (intercept free, slopes shrunk by the ridge penalty). Slopes only with
    # enough trials (two per coefficient): with fewer, they fit the points exactly and swallow
    # the class difference. The fitted values are linear in the targets (y + the cell's log
    # speed): ``hat @ target``, the hat matrix computed once, not a least-squares solve per
    # sweep.
    hats: dict[str, np.ndarray] = {}
    for s, rows in by_sub.items():
        p = len(rows[0][2])
        use_x = len(rows) >= 2 * (p + 1)
        design = np.array([[1.0, *(x if use_x else ())] for _, _, x in rows])
        penalty = np.sqrt(ridge) * np.eye(design.shape[1])[1:]
        hats[s] = design @ np.linalg.pinv(np.vstack([design, penalty]))[:, : len(rows)]
    for _ in range(sweeps if obs else 0):
        gap: dict[tuple[str, str], list[float]] = {}
        for s, rows in by_sub.items():
            target = np.array([y + lam[(c, s)] for c, y, _ in rows])
            fitted = hats[s] @ target
            for (c, y, _), f in zip(rows, fitted, strict=True):
                gap.setdefault((c, s), []).append(float(f) - y)
        # Given the reference durations: each class's pooled ratio, then each cell's speed.
        for c in classes:
            residuals = [g - prior[(cc, s)] for (cc, s), gs in gap.items() if cc == c for g in gs]
            ratio[c] = sum(residuals) / (len(residuals) + prior_weight)
        for c in classes:
            for s in subspaces:
                gs = gap.get((c, s), [])
                centre = prior[(c, s)] + ratio[c]
                lam[(c, s)] = (prior_weight * centre + sum(gs)) / (prior_weight + len(gs))
    # Only relative speeds are identified: a common factor moves between mu and every lambda
    # freely. Fix it so that the classes' measured/declared ratios average 1 (weighted by
    # trials): measured speeds stay on the declared scale.
    total = sum(counts.values())
    shift = (
        sum(n * (lam[cell] - prior[cell]) for cell, n in counts.items()) / total if total else 0.0
    )
    return {
        (c, s): SpeedEstimate(
            c, s, classes[c].speed_of(s), math.exp(lam[(c, s)] - shift), counts.get((c, s), 0)
        )
        for c in classes
        for s in subspaces
    }


def class_speed(estimates: Mapping[tuple[str, str], SpeedEstimate], cls: HardwareClass) -> float:
    """A class's overall measured speed: its declared speed times its pooled measured/declared
    ratio (geometric mean over sub-spaces, weighted by trials; the declared speed if none ran)."""
    mine = [e for (c, _), e in estimates.items() if c == cls.name and e.trials]
    if not mine:
        return cls.speed
    total = sum(e.trials for e in mine)
    log_ratio = sum(e.trials * math.log(e.ratio) for e in mine) / total
    return cls.speed * math.exp(log_ratio)


def measured_classes(
    classes: Mapping[str, HardwareClass],
    estimates: Mapping[tuple[str, str], SpeedEstimate],
) -> dict[str, HardwareClass]:
    """The classes with their measured speeds: ``speed`` is the pooled measured speed and
    ``speed_by_subspace`` every sub-space's estimate (declared speeds where nothing ran)."""
    out = {}
    for name, cls in classes.items():
        by_sub = tuple((s, e.measured) for (c, s), e in sorted(estimates.items()) if c == name)
        out[name] = replace(cls, speed=class_speed(estimates, cls), speed_by_subspace=by_sub)
    return out


def slower_than_declared(
    estimates: Mapping[tuple[str, str], SpeedEstimate],
    classes: Mapping[str, HardwareClass],
) -> list[str]:
    """Classes whose pooled measured speed is below ``SLOWER_THAN_DECLARED`` of the declared
    one, relative to the other classes (only relative speeds are measured)."""
    if len(classes) < 2:
        return []
    ratios = {n: class_speed(estimates, c) / c.speed for n, c in classes.items()}
    out = []
    for name, r in ratios.items():
        others = sorted(v for n, v in ratios.items() if n != name)
        if r / others[len(others) // 2] < SLOWER_THAN_DECLARED:
            out.append(name)
    return out


def speeds_table(
    estimates: Mapping[tuple[str, str], SpeedEstimate],
) -> list[dict[str, Any]]:
    """The estimates as rows (for plans and reports)."""
    return [
        {
            "hw_class": e.hw_class,
            "subspace": e.subspace,
            "declared": e.declared,
            "measured": round(e.measured, 6),
            "trials": e.trials,
        }
        for _, e in sorted(estimates.items())
    ]
