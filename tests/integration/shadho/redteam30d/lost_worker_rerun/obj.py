"""Simulates the OOM killer taking a worker mid-trial: on its first attempt a b trial starts
a detached helper that SIGKILLs the trial's parent (the warm worker process) 0.3 s later,
while the trial is still running. The rerun (same parameters) finds the marker and
returns normally."""
import os
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def evaluate(params, threads=1):
    x = float(params["x"])
    if params["model"] == "b":
        marker = os.path.join(HERE, "rt-lost-%r" % x)
        if not os.path.exists(marker):
            open(marker, "w").close()
            subprocess.Popen(
                ["sh", "-c", "sleep 0.3; kill -9 %d" % os.getppid()],
                start_new_session=True,
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
            time.sleep(5)
            return {"loss": 99.0, "attempt": "survived"}
        return {"loss": (x - 0.3) ** 2, "attempt": "rerun"}
    time.sleep(0.2)
    return {"loss": (x - 0.3) ** 2, "attempt": "first"}
