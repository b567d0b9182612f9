"""Text normalisation; some branches run only for some samples."""

import re

STOP = {"the", "a", "of", "and", "to", "in"}


def normalize(text, min_len):
    text = text.lower()
    if any(ch.isdigit() for ch in text):
        text = strip_digits(text)
    tokens = tokenize(text)
    if len(tokens) > 40:
        tokens = shorten(tokens)
    return [t for t in tokens if len(t) >= min_len and t not in STOP]


def strip_digits(text):
    return re.sub(r"[0-9]+", " ", text)


def tokenize(text):
    return re.findall(r"[a-z]+", text)


def shorten(tokens):
    return tokens[:40]
