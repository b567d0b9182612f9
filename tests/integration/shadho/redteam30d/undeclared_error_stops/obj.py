"""Sub-space b has a bug (an undeclared ValueError); a is fine."""
import time


def evaluate(params, threads=1):
    x = float(params["x"])
    time.sleep(0.1)
    if params["model"] == "b":
        raise ValueError("boom-rt-undeclared x=%.3f" % x)
    return {"loss": (x - 0.3) ** 2}
