"""Direct mode (thread at import) with module state changed in place: a list and a dict
cache, an lru_cache, a class attribute, a patched library class. None rebinds a module
global, so a globals check may not see them."""
import functools
import json
# A background thread started at import (a metrics/prefetch thread): forking this
# process is unsafe, so per the docs the workers run trials in direct mode.
import threading as _threading
import time as _time


def _keepalive():
    while True:
        _time.sleep(3600)


_threading.Thread(target=_keepalive, name="rt-keepalive", daemon=True).start()

CACHE = []
MEMO = {}


class Config:
    scale = 1.0


@functools.lru_cache(maxsize=None)
def feature(k):
    return k * 2


_ORIG_DEFAULT = json.JSONEncoder.default


def evaluate(params, threads=1):
    x = float(params["x"])
    seen = {
        "cache_len": len(CACHE),
        "memo_len": len(MEMO),
        "class_attr": Config.scale,
        "lru_size": feature.cache_info().currsize,
        "json_patched": json.JSONEncoder.default is not _ORIG_DEFAULT,
    }
    CACHE.append(x)
    MEMO[x] = x
    Config.scale = Config.scale * 2
    feature(int(x * 1000))
    json.JSONEncoder.default = lambda self, o: str(o)
    _time.sleep(0.1)
    out = {"loss": (x - 0.3) ** 2}
    out.update(seen)
    return out
