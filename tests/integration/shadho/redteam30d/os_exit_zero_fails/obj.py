"""Sub-space b ends its own process with os._exit(0) (as code that 'quits fast' to skip slow
teardown does). The first attempt of a trial leaves a marker; should the trial be run
again (wrongly treated as a lost worker), the second attempt returns normally."""
import os
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
        os._exit(0)
    return {"loss": (x - 0.3) ** 2, "attempt": 1}
