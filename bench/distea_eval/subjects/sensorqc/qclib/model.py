"""The detector a sticky worker keeps warm: limits per feature, read-only once built."""


def reference_limits():
    return {"range": 40.0, "mean": 20.0, "spikes": 3.0, "span": 60.0}


class Detector:
    def __init__(self, limits, scale):
        self.limits = {name: limit * scale for name, limit in limits.items()}

    def score(self, feats):
        total = 0.0
        for name, value in sorted(feats.items()):
            total += value / self.limits.get(name, 1.0)
        return total

    def flag(self, feats, threshold):
        return self.score(feats) > threshold
