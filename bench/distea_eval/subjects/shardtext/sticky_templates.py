"""Sticky templates of the shardtext workflow."""

from textkit import (
    LABELS,
    corpus,  # noqa: F401  (the shard reader classify.py uses: load it once per worker)
)
from textkit.model import LexiconModel

from stickyinvoc import template


def memoize(fn):
    """A per-worker cache of fn(token); the cache lives in this closure."""
    cache = {}
    stats = {"hits": 0, "misses": 0}

    def lookup(token):
        if token in cache:
            stats["hits"] += 1
            return cache[token]
        stats["misses"] += 1
        value = fn(token)
        cache[token] = value
        return value

    lookup.cache = cache
    lookup.stats = stats
    return lookup


def boosted(model, factor=1.25):
    """Cue words of at least 8 letters weigh more (rare, specific words)."""
    for word, (label, weight) in list(model.entries.items()):
        if len(word) >= 8:
            model.entries[word] = (label, round(weight * factor, 4))
    return model


@template("lexicon")
def lexicon():
    model = boosted(LexiconModel.from_file("resources/lexicon.tsv", LABELS, damping=0.8))
    return {"model": model, "lookup": memoize(model.token_scores)}
