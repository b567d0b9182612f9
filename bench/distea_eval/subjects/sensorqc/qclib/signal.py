"""Parsing and cleaning of sensor series."""


def parse_csv(text):
    rows = []
    for line in text.strip().splitlines()[1:]:
        t, v = line.split(",")
        rows.append((int(t), float(v)))
    return rows


def clip(values, limit):
    return [min(max(v, -limit), limit) for v in values]


def despike(values, factor=3.0):
    if len(values) < 3:
        return list(values)
    mean = sum(values) / len(values)
    spread = sum(abs(v - mean) for v in values) / len(values)
    return [mean if abs(v - mean) > factor * spread else v for v in values]


def moving_average(values, window):
    out = []
    for i in range(len(values)):
        lo = max(0, i - window + 1)
        chunk = values[lo : i + 1]
        out.append(sum(chunk) / len(chunk))
    return out
