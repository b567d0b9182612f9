"""Objective that keeps module-level state a careless user would keep: a counter, a list
and a dict cache, a class attribute, an lru_cache, and a monkeypatch of a library class.
Each trial reports what it found, then changes all of it."""
import functools
import json
import time

COUNTER = 0
CACHE = []
MEMO = {}


class Config:
    scale = 1.0


@functools.lru_cache(maxsize=None)
def feature(k):
    return k * 2


_ORIG_DEFAULT = json.JSONEncoder.default


def evaluate(params, threads=1):
    global COUNTER
    x = float(params["x"])
    seen = {
        "counter": COUNTER,
        "cache_len": len(CACHE),
        "memo_len": len(MEMO),
        "class_attr": Config.scale,
        "lru_size": feature.cache_info().currsize,
        "json_patched": json.JSONEncoder.default is not _ORIG_DEFAULT,
    }
    COUNTER += 1
    CACHE.append(x)
    MEMO[x] = x
    Config.scale = Config.scale * 2
    feature(int(x * 1000))
    json.JSONEncoder.default = lambda self, o: str(o)
    time.sleep(0.1)
    out = {"loss": (x - 0.3) ** 2}
    out.update(seen)
    return out
