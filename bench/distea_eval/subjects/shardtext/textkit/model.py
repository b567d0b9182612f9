"""Classifiers: naive Bayes (trained) and a lexicon model (held by the sticky template)."""

import json

import numpy as np


def softmax(scores):
    z = np.asarray(scores, dtype=float)
    z = z - z.max()
    e = np.exp(z)
    return e / e.sum()


class BaseClassifier:
    def __init__(self, labels):
        self.labels = tuple(labels)

    @property
    def n_classes(self):
        return len(self.labels)

    def scores(self, tokens):
        raise NotImplementedError

    def probabilities(self, tokens):
        return softmax(self.scores(tokens))


class NaiveBayes(BaseClassifier):
    def __init__(self, labels, vocab, counts, alpha=0.5):
        super().__init__(labels)
        self.vocab = list(vocab)
        self.index = {token: i for i, token in enumerate(self.vocab)}
        self.counts = np.asarray(counts, dtype=float)
        self.alpha = float(alpha)
        totals = self.counts.sum(axis=1, keepdims=True)
        self.log_prior = np.log((totals[:, 0] + 1.0) / (totals.sum() + self.n_classes))
        self.log_lik = np.log(
            (self.counts + self.alpha) / (totals + self.alpha * max(len(self.vocab), 1))
        )

    @property
    def size(self):
        return len(self.vocab)

    def scores(self, tokens):
        scores = self.log_prior.copy()
        for token in tokens:
            column = self.index.get(token)
            if column is not None:
                scores += self.log_lik[:, column]
        return scores

    def save(self, path):
        data = {
            "labels": list(self.labels),
            "alpha": self.alpha,
            "vocab": self.vocab,
            "counts": [[round(float(v), 6) for v in row] for row in self.counts],
        }
        with open(path, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=1, sort_keys=True)

    @classmethod
    def load(cls, path):
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        return cls(data["labels"], data["vocab"], data["counts"], alpha=data["alpha"])


class LexiconModel(BaseClassifier):
    """Hand-written cue words with weights; unknown words fall back to a 5-letter prefix."""

    def __init__(self, labels, entries, damping=0.8):
        super().__init__(labels)
        self.entries = dict(entries)
        self.damping = damping
        self.prefixes = {}
        for word in sorted(self.entries):
            if len(word) >= 6:
                self.prefixes.setdefault(word[:5], word)

    @classmethod
    def from_file(cls, path, labels, damping=0.8):
        entries = {}
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("#") or not line.strip():
                    continue
                word, label, weight = line.split()
                entries[word] = (label, float(weight))
        return cls(labels, entries, damping=damping)

    def token_scores(self, token):
        entry = self.entries.get(token)
        if entry is None and len(token) > 5:
            word = self.prefixes.get(token[:5])
            if word is not None:
                label, weight = self.entries[word]
                entry = (label, weight * 0.5)
        out = [0.0] * self.n_classes
        if entry is not None:
            out[self.labels.index(entry[0])] = entry[1]
        return tuple(out)

    def scores(self, tokens, lookup=None):
        lookup = lookup or self.token_scores
        total = np.zeros(self.n_classes)
        for token in tokens:
            total += lookup(token)
        return total * self.damping


def blend(nb_probs, lex_probs, weight=0.4):
    if weight <= 0:
        return np.asarray(nb_probs, dtype=float)
    return (1.0 - weight) * np.asarray(nb_probs) + weight * np.asarray(lex_probs)


def decide(labels, probs, threshold):
    """The best label, or 'uncertain' when its lead over the runner-up is below threshold."""
    order = np.argsort(-np.asarray(probs), kind="stable")
    margin = float(probs[order[0]] - probs[order[1]])
    if margin < threshold:
        return "uncertain", margin
    return labels[order[0]], margin
