"""A script-style objective that calls sys.exit(0) when it thinks it is done (sub-space b)."""
import sys
import time


def evaluate(params, threads=1):
    x = float(params["x"])
    time.sleep(0.1)
    if params["model"] == "b":
        print("done early")
        sys.exit(0)
    return {"loss": (x - 0.3) ** 2}
