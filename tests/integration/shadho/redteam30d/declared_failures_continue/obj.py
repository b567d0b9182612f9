"""Declared failures only: a diverges (non-finite loss), b raises TrialFailed. Neither
counts against max_failed_trials (default 0): the search must run to its end."""
import time

from snakemake_shadho import TrialFailed


def evaluate(params, threads=1):
    x = float(params["x"])
    time.sleep(0.05)
    if params["model"] == "a":
        return {"loss": float("nan"), "note": "diverged"}
    raise TrialFailed("diverged-rt x=%.2f" % x)
