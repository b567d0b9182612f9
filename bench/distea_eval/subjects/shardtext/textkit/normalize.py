"""Tokenisers: a small class hierarchy, and a table of configured normalisers."""

import functools
import re

_WORD = re.compile(r"[A-Za-z0-9']+")

STOPWORDS = frozenset(
    "the a an of and or to in on for with is was it this that at by our my their".split()
)


class Normalizer:
    """Lowercase word tokens of at least ``min_len`` characters."""

    name = "plain"

    def __init__(self, min_len=2):
        self.min_len = min_len

    def tokens(self, line):
        for match in _WORD.finditer(line):
            yield match.group(0).lower()

    def keep(self, token):
        return len(token) >= self.min_len or token.isdigit()

    def __call__(self, line):
        return [token for token in self.tokens(line) if self.keep(token)]


class StopwordNormalizer(Normalizer):
    name = "strict"

    def __init__(self, min_len=2, stopwords=STOPWORDS):
        super().__init__(min_len)
        self.stopwords = stopwords

    def keep(self, token):
        if token in self.stopwords:
            return False
        return super().keep(token)


class StemmingNormalizer(StopwordNormalizer):
    name = "stem"
    SUFFIXES = ("ing", "ed", "es", "s", "ly")

    def tokens(self, line):
        for token in super().tokens(line):
            yield self.stem(token)

    def stem(self, token):
        for suffix in self.SUFFIXES:
            if token.endswith(suffix) and len(token) - len(suffix) >= 4:
                return token[: -len(suffix)]
        return token


def mask_number(token):
    """Numbers become classes: small, hundreds, years, big."""
    value = int(token)
    if value < 100:
        return "<num>"
    if value >= 1900 and value <= 2100:
        return "<year>"
    return "<big>" if value > 999 else "<hundreds>"


def shout_bonus(line, tokens):
    """A line ending in '!' repeats its longest token (emphasis counts twice)."""
    if line.rstrip().endswith("!") and len(tokens) > 2:
        longest = max(tokens, key=lambda t: (len(t), t))
        return tokens + [longest]
    return tokens


def normalize_line(line, normalizer_cls=Normalizer, min_len=2, mask_numbers=True):
    tokenizer = normalizer_cls(min_len=min_len)
    tokens = []
    for token in tokenizer(line):
        if mask_numbers and token.isdigit():
            token = mask_number(token)
        tokens.append(token)
    return shout_bonus(line, tokens)


NORMALIZERS = {
    "plain": functools.partial(normalize_line, normalizer_cls=Normalizer, mask_numbers=False),
    "strict": functools.partial(normalize_line, normalizer_cls=StopwordNormalizer),
    "stem": functools.partial(normalize_line, normalizer_cls=StemmingNormalizer),
}


def get_normalizer(name, min_len=None):
    normalizer = NORMALIZERS[name]
    if min_len is not None:
        normalizer = functools.partial(normalizer, min_len=min_len)
    return normalizer
