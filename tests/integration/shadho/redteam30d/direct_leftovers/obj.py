"""Direct mode (thread at import). A trial leaves behind a daemon thread, a raw file
descriptor (as a C library would leak it) and a child process; a later trial looks for
them. A fresh process has none of them."""
import os
import subprocess
# A background thread started at import (a metrics/prefetch thread): forking this
# process is unsafe, so per the docs the workers run trials in direct mode.
import threading as _threading
import time as _time


def _keepalive():
    while True:
        _time.sleep(3600)


_threading.Thread(target=_keepalive, name="rt-keepalive", daemon=True).start()

HERE = os.path.dirname(os.path.abspath(__file__))
MARKER = os.path.join(HERE, "rt-leak-marker.txt")


def _fd_to_marker():
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink("/proc/self/fd/" + fd) == MARKER:
                return True
        except OSError:
            pass
    return False


def _child_sleep():
    for tid in os.listdir("/proc/self/task"):
        try:
            with open("/proc/self/task/%s/children" % tid) as f:
                pids = f.read().split()
        except OSError:
            continue
        for pid in pids:
            try:
                with open("/proc/%s/cmdline" % pid, "rb") as f:
                    if f.read() == b"sleep\x007.123\x00":
                        return True
            except OSError:
                pass
    return False


def _spin():
    while True:
        _time.sleep(0.5)


def evaluate(params, threads=1):
    x = float(params["x"])
    seen = {
        "thread": any(t.name == "rt-trial-thread" for t in _threading.enumerate()),
        "fd": _fd_to_marker(),
        "child": _child_sleep(),
    }
    _threading.Thread(target=_spin, name="rt-trial-thread", daemon=True).start()
    os.open(MARKER, os.O_RDWR | os.O_CREAT, 0o644)  # leaked on purpose
    subprocess.Popen(["sleep", "7.123"])
    _time.sleep(0.1)
    out = {"loss": (x - 0.3) ** 2}
    out.update(seen)
    return out
