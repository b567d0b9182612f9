"""Numeric helpers: weighted rolling means, column features, load buckets, part summaries."""

import functools
import os

import numpy as np

from .schema import Table

BUCKET_EDGES = (25.0, 60.0)
BUCKET_NAMES = ("low", "mid", "high")
SPIKE_SIGMA = 1.5
HIGH_SCORE = 60.0
DAMPING = 0.5
FOLD_REF = 1.15
PRECISION = 4


@functools.lru_cache(maxsize=64)
def window_weights(window: int) -> tuple:
    raw = [1.0 + i / window for i in range(window)]
    total = sum(raw)
    return tuple(w / total for w in raw)


def rolling(values, window: int) -> np.ndarray:
    arr = np.asarray(values, dtype=float)
    if len(arr) < window:
        return arr.copy()
    weights = np.asarray(window_weights(window))
    return np.convolve(arr, weights[::-1], mode="valid")


def effective_window(window: int, n_samples: int) -> int:
    """The rolling window of a group: one wider for groups of more than two samples."""
    if n_samples > 2:
        return window + 1
    return window


def column_features(job: tuple) -> tuple:
    name, values, window = job
    arr = np.asarray(values, dtype=float)
    mean = float(arr.mean())
    std = float(arr.std())
    spikes = int(np.sum(arr > mean + SPIKE_SIGMA * std))
    smooth = rolling(arr, window)
    return name, {
        "mean": round(mean, PRECISION),
        "std": round(std, PRECISION),
        "spikes": spikes,
        "smooth_max": round(float(smooth.max()), PRECISION),
    }


def bucket_of(load: float) -> str:
    if load < BUCKET_EDGES[0]:
        return BUCKET_NAMES[0]
    if load < BUCKET_EDGES[1]:
        return BUCKET_NAMES[1]
    return BUCKET_NAMES[2]


def summarise_part(job: tuple) -> tuple:
    path, scale = job
    table = Table.from_csv(path)
    loads = table.column("load")
    sources = sorted({int(s) for s in table.column("src")})
    mean = sum(loads) / len(loads) if loads else 0.0
    return os.path.basename(path), {
        "rows": len(loads),
        "sources": sources,
        "scaled_mean": round(mean * scale, PRECISION),
        "peak": round(max(loads), PRECISION),
    }


def score_table(table: Table, window: int) -> float:
    """A part's score: the largest rolling mean of its loads, damped above HIGH_SCORE."""
    smooth = rolling(table.column("load"), window)
    score = float(smooth.max())
    if score > HIGH_SCORE:
        score = HIGH_SCORE + (score - HIGH_SCORE) * DAMPING
    return round(score, PRECISION)


def blend(mean_load: float, folded: float, rows: int, weight: float) -> float:
    """A sample's headline figure in the group report: its mean load, plus a share of its
    folded load per row where that is high."""
    per_row = folded / rows
    if per_row < mean_load * FOLD_REF:
        return round(mean_load * weight, PRECISION)
    return round((mean_load + per_row / 10) * weight, PRECISION)
