"""Direct mode (thread at import). Sub-space b guards itself with a hang watchdog,
faulthandler.dump_traceback_later(1.2, exit=True), and returns after 0.2 s without
cancelling it; sub-space a trials take 1.0 s. In a fresh process the watchdog dies with
the trial; in a shared process it fires ~1 s into the next trial and _exit()s it."""
import faulthandler
# A background thread started at import (a metrics/prefetch thread): forking this
# process is unsafe, so per the docs the workers run trials in direct mode.
import threading as _threading
import time as _time


def _keepalive():
    while True:
        _time.sleep(3600)


_threading.Thread(target=_keepalive, name="rt-keepalive", daemon=True).start()


def evaluate(params, threads=1):
    x = float(params["x"])
    if params["model"] == "b":
        faulthandler.dump_traceback_later(1.2, exit=True)
        _time.sleep(0.2)
    else:
        _time.sleep(1.0)
    return {"loss": (x - 0.3) ** 2, "seen": "done"}
