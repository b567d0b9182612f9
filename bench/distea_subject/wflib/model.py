"""The worker-side model: a vocabulary, hashed embeddings and a cache shared across jobs."""

import hashlib

DIMS = 8
SEED_WORDS = "model data graph science worker cache order event message process".split()


def build_vocab():
    return {word: index for index, word in enumerate(sorted(SEED_WORDS))}


def token_vector(token, dims):
    digest = hashlib.sha256(token.encode()).digest()
    return [digest[i] / 255.0 for i in range(dims)]


def rare_vector(token, dims):
    vec = token_vector(token, dims)
    return [v * 0.5 for v in vec]


class Model:
    def __init__(self, vocab, dims):
        self.vocab = vocab
        self.dims = dims
        self.cache = {}
        self.served = 0

    def embed(self, tokens):
        self.served += 1
        total = [0.0] * self.dims
        for token in tokens:
            vec = self.cache.get(token)
            if vec is None:
                vec = self.lookup(token)
                self.cache[token] = vec
            total = [a + b for a, b in zip(total, vec, strict=True)]
        n = max(1, len(tokens))
        return [round(v / n, 6) for v in total]

    def lookup(self, token):
        if token in self.vocab:
            return token_vector(token, self.dims)
        return rare_vector(token, self.dims)
