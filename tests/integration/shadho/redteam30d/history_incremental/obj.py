"""The history must be rewritten after every result. Each trial counts the trials that had
returned before it started (a marker line each appends just before returning), waits a
second (ample for the result to reach the driver), and counts the records in
out/history.jsonl: there must be at least as many."""
import os
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FINISHED = os.path.join(HERE, "rt_finished.txt")
HISTORY = os.path.join(HERE, "out", "history.jsonl")


def _count(path):
    try:
        with open(path) as f:
            return sum(1 for line in f if line.strip())
    except FileNotFoundError:
        return 0


def evaluate(params, threads=1):
    x = float(params["x"])
    returned_before = _count(FINISHED)
    time.sleep(1.0)
    in_history = _count(HISTORY)
    fd = os.open(FINISHED, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, b"%r\n" % x)
    os.close(fd)
    return {"loss": (x - 0.3) ** 2, "history_keeps_up": in_history >= returned_before}
