"""Sloppy but common: a multiprocessing Pool never closed, a ProcessPoolExecutor never shut
down, and a background helper process (here `sleep 25`) started and never waited for.
A fresh process ends normally with these (the pools are finalised at exit, the helper
lives on). Each trial first counts the children it has and background helpers it can see
as its own children."""
import multiprocessing as mp
import os
import subprocess
import time
from concurrent.futures import ProcessPoolExecutor


def sq(v):
    return v * v


def _my_children():
    pids = []
    for tid in os.listdir("/proc/self/task"):
        try:
            with open("/proc/self/task/%s/children" % tid) as f:
                pids += f.read().split()
        except OSError:
            pass
    return pids


def evaluate(params, threads=1):
    x = float(params["x"])
    seen = {"mp_children": len(mp.active_children()), "os_children": len(_my_children())}
    ctx = mp.get_context("fork")
    pool = ctx.Pool(2)
    r1 = pool.map(sq, range(8))
    ex = ProcessPoolExecutor(2, mp_context=ctx)
    r2 = list(ex.map(sq, range(8)))
    subprocess.Popen(["sleep", "25"])  # a helper left running
    seen["results_ok"] = r1 == r2 == [i * i for i in range(8)]
    time.sleep(0.1)
    out = {"loss": (x - 0.3) ** 2}
    out.update(seen)
    return out
