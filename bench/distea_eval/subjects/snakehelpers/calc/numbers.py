"""Parsing, normalisation and statistics of number series."""


def parse(text):
    return [float(x) for x in text.split()]


def normalise(values, clip, scale):
    return [min(v, clip) * scale for v in values]


def mean(values):
    return sum(values) / len(values)


def variance(values):
    m = mean(values)
    return sum((v - m) ** 2 for v in values) / len(values)


def outliers(values, limit):
    m = mean(values)
    return [v for v in values if abs(v - m) > limit]


def describe(values):
    return {
        "mean": round(mean(values), 4),
        "var": round(variance(values), 4),
        "outliers": len(outliers(values, 4.0)),
    }
