"""Direct-mode canary: trials run in the worker process itself (pid as at import);
a rebound module global must make the worker retire so the next trial starts fresh;
$SHADHO_HW_CLASS must still be set during the trial."""
import os
# A background thread started at import (a metrics/prefetch thread): forking this
# process is unsafe, so per the docs the workers run trials in direct mode.
import threading as _threading
import time as _time


def _keepalive():
    while True:
        _time.sleep(3600)


_threading.Thread(target=_keepalive, name="rt-keepalive", daemon=True).start()

IMPORT_PID = os.getpid()
COUNTER = 0


def evaluate(params, threads=1):
    global COUNTER
    x = float(params["x"])
    seen = {
        "direct": os.getpid() == IMPORT_PID,
        "has_class": os.environ.get("SHADHO_HW_CLASS") in ("fast", "slow"),
        "counter": COUNTER,
    }
    COUNTER += 1
    _time.sleep(0.1)
    out = {"loss": (x - 0.3) ** 2}
    out.update(seen)
    return out
