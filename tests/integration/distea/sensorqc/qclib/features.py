"""Features reached in every way a reference can be taken before tracing starts."""

import functools


def f_range(xs):
    return max(xs) - min(xs)


def f_mean(xs):
    return sum(xs) / len(xs)


def f_scaled(xs, factor):
    return [x * factor for x in xs]


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


@logged
def f_clip(xs, limit):
    return [min(x, limit) for x in xs]


EXTRACTORS = {"range": f_range, "mean": f_mean}
SUMMARIES = [f_mean]
half = functools.partial(f_scaled, factor=0.5)


def extract(kind, xs):
    return EXTRACTORS[kind](xs)


def summarise(xs, callbacks=SUMMARIES):
    return [cb(xs) for cb in callbacks]
