"""Features of token lists (a registry filled by a decorator), the vocabulary, class counts."""

import collections
import functools
import math

import numpy as np

from .corpus import read_clean

FEATURES = {}


def feature(name, scale=1.0):
    """Register ``fn`` under ``name``; the registry holds it scaled by ``scale``."""

    def register(fn):
        @functools.wraps(fn)
        def scaled(tokens):
            return round(scale * fn(tokens), 6)

        FEATURES[name] = scaled
        return fn

    return register


@feature("length", scale=0.1)
def n_tokens(tokens):
    return float(len(tokens))


@feature("long_ratio")
def long_ratio(tokens):
    if not tokens:
        return 0.0
    return sum(1 for token in tokens if len(token) > 7) / len(tokens)


@feature("numbers")
def number_share(tokens):
    marks = [token for token in tokens if token.startswith("<")]
    if len(marks) == 0:
        return 0.0
    return len(marks) / (len(tokens) + 1)


@feature("repeats", scale=0.5)
def repeats(tokens):
    seen = set()
    duplicates = 0
    for token in tokens:
        if token in seen:
            duplicates += 1
        seen.add(token)
    return float(duplicates)


class FeatureVector:
    def __init__(self, values):
        self.values = dict(values)

    @property
    def norm(self):
        return math.sqrt(sum(value * value for value in self.values.values()))

    @property
    def dominant(self):
        best = max(sorted(self.values), key=lambda name: self.values[name])
        if self.values[best] > 0.25:
            return best
        return "none"

    def __add__(self, other):
        names = sorted(set(self.values) | set(other.values))
        return FeatureVector({n: self.values.get(n, 0.0) + other.values.get(n, 0.0) for n in names})

    def scaled(self, factor):
        return FeatureVector({n: v * factor for n, v in self.values.items()})


def extract(tokens, names=None):
    names = sorted(FEATURES) if names is None else names
    return FeatureVector({name: FEATURES[name](tokens) for name in names})


def build_vocab(token_lists, min_count=2, max_size=400):
    counts = collections.Counter()
    for tokens in token_lists:
        counts.update(tokens)
    kept = [token for token, count in counts.items() if count >= min_count]
    kept.sort(key=lambda token: (-counts[token], token))
    return sorted(kept[:max_size])


def class_counts(task):
    """Worker of the training pool: weighted token counts per label of one cleaned file."""
    path, vocab, labels = task
    index = {token: i for i, token in enumerate(vocab)}
    weight, rows = read_clean(path)
    counts = np.zeros((len(labels), len(vocab)))
    for label, tokens in rows:
        row = labels.index(label)
        for token in tokens:
            column = index.get(token)
            if column is not None:
                counts[row, column] += weight
    return counts
