"""Direct mode (thread at import). Process-global settings held in C, several without a
getter the docs list: the TZ database state after time.tzset(), the GIL switch interval,
the new-thread stack size, faulthandler, int<->str digit limit, gc thresholds, dlopen
flags, CPU affinity, plus decimal/socket/csv/numpy ones. Compared with the import-time
snapshot, then all changed."""
import csv
import decimal
import faulthandler
import gc
import os
import socket
import sys

import numpy as np
# A background thread started at import (a metrics/prefetch thread): forking this
# process is unsafe, so per the docs the workers run trials in direct mode.
import threading as _threading
import time as _time


def _keepalive():
    while True:
        _time.sleep(3600)


_threading.Thread(target=_keepalive, name="rt-keepalive", daemon=True).start()


def snapshot():
    return {
        "tzname": list(_time.tzname),
        "timezone": _time.timezone,
        "switchinterval": sys.getswitchinterval(),
        "stack_size": _threading.stack_size(),
        "faulthandler": faulthandler.is_enabled(),
        "int_max_str_digits": sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else None,
        "gc_threshold": list(gc.get_threshold()),
        "dlopenflags": sys.getdlopenflags(),
        "affinity": sorted(os.sched_getaffinity(0)),
        "decimal_prec": decimal.getcontext().prec,
        "socket_timeout": socket.getdefaulttimeout(),
        "csv_limit": csv.field_size_limit(),
        "np_precision": np.get_printoptions()["precision"],
    }


IMPORT_SNAPSHOT = snapshot()


def evaluate(params, threads=1):
    x = float(params["x"])
    now = snapshot()
    diff = sorted(k for k in now if now[k] != IMPORT_SNAPSHOT[k])
    os.environ["TZ"] = "Asia/Tokyo" if _time.timezone != -32400 else "America/New_York"
    _time.tzset()
    sys.setswitchinterval(0.0005)
    _threading.stack_size(1 << 20)
    faulthandler.enable()
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(100000)
    gc.set_threshold(5000, 20, 20)
    sys.setdlopenflags(os.RTLD_NOW | os.RTLD_GLOBAL)
    cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, {cpus[0]})
    decimal.getcontext().prec = 5
    socket.setdefaulttimeout(3.0)
    csv.field_size_limit(10)
    np.set_printoptions(precision=2)
    _time.sleep(0.1)
    return {"loss": (x - 0.3) ** 2, "diff": diff}
