"""Sub-space b dies in C code (a NULL read through ctypes: SIGSEGV) when x < 1, and
SIGKILLs itself (as a watchdog in the objective might) when x >= 1. First attempts leave
a marker; a rerun (wrongly treating it as a lost worker) would return normally."""
import ctypes
import os
import signal
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def evaluate(params, threads=1):
    x = float(params["x"])
    time.sleep(0.1)
    if params["model"] == "b":
        marker = os.path.join(HERE, "rt-attempt-%r" % x)
        if os.path.exists(marker):
            return {"loss": (x - 0.3) ** 2, "attempt": 2}
        open(marker, "w").close()
        if x < 1:
            ctypes.string_at(0)
        else:
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(5)
    return {"loss": (x - 0.3) ** 2, "attempt": 1}
