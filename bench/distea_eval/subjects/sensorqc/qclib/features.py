"""Features of a cleaned series, computed through a table of extractors."""


def f_range(values):
    return max(values) - min(values)


def f_mean(values):
    return sum(values) / len(values)


def f_spikes(values):
    mean = f_mean(values)
    return sum(1 for v in values if abs(v - mean) > 10)


def f_slope(values):
    return (values[-1] - values[0]) / max(1, len(values) - 1)


EXTRACTORS = {"range": f_range, "mean": f_mean, "spikes": f_spikes}


def extract(values, names):
    return {name: round(EXTRACTORS[name](values), 4) for name in names}
