"""A pipeline of callbacks registered on an object, and summaries."""


class Pipeline:
    def __init__(self):
        self.callbacks = []

    def on_value(self, fn):
        self.callbacks.append(fn)
        return fn

    def run(self, values):
        out = []
        for v in values:
            for callback in self.callbacks:
                v = callback(v)
            out.append(v)
        return out


def halve(v):
    return v / 2


def offset(v):
    if v > 10:
        return v + 1
    return v


def build():
    pipeline = Pipeline()
    pipeline.on_value(halve)
    pipeline.on_value(offset)
    return pipeline


def total(values):
    return sum(values)


def describe(values, digits):
    return {"n": len(values), "total": round(total(values), digits), "max": max(values)}
