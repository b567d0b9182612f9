"""textkit: the workflow-local helpers of the sharded text classification subject.

Modules:
    corpus     reading corpora, the cleaned format and shards
    normalize  tokenisers (a small class hierarchy) and a table of configured normalisers
    features   a decorator-filled feature registry, the vocabulary and class counts
    model      naive Bayes and the lexicon model held by the sticky template
    metrics    per-shard and per-sample scores
    tokstat    command line: token statistics of one shard (python -m textkit.tokstat)
"""

LABELS = ("food", "sport", "tech")

__all__ = ["LABELS"]
