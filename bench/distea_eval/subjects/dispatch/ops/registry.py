"""Operations registered by name with a decorator, applied through the registry."""

import functools

REGISTRY = {}


def register(name):
    def deco(fn):
        REGISTRY[name] = fn
        return fn

    return deco


@register("double")
def double(x):
    return x * 2


@register("shift")
def shift(x):
    return x + 3


@register("square")
def square(x):
    return x * x


def clamp(x, lo, hi):
    return max(lo, min(hi, x))


clamp_small = functools.partial(clamp, lo=0, hi=40)


def apply(names, values):
    for name in names:
        values = [REGISTRY[name](v) for v in values]
    return [clamp_small(v) for v in values]
