"""Scores from embeddings; the boost path runs only for high-scoring samples."""


def score(vector, threshold, boost):
    value = sum(vector) / len(vector)
    if value > threshold:
        value = apply_boost(value, boost)
    return round(value, 6)


def apply_boost(value, boost):
    return value * boost


def label(value, threshold):
    return "high" if value > threshold else "low"
