"""Snapshot of process-global settings taken when the objective is imported; every trial
compares the process with it (a fresh process would match), then changes all of them."""
import codecs
import copyreg
import csv
import decimal
import faulthandler
import gc
import json
import logging
import mimetypes
import os
import resource
import socket
import subprocess
import sys
import threading
import time
import warnings

import numpy as np

_ORIG_JSON_DEFAULT = json.JSONEncoder.default


class Thing:
    pass


def _umask():
    m = os.umask(0o022)
    os.umask(m)
    return m


def _codec_known():
    try:
        codecs.lookup("rt_codec")
        return True
    except LookupError:
        return False


def snapshot():
    s = {}
    s["decimal_prec"] = decimal.getcontext().prec
    s["recursionlimit"] = sys.getrecursionlimit()
    s["int_max_str_digits"] = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else None
    s["gc_enabled"] = gc.isenabled()
    s["gc_threshold"] = list(gc.get_threshold())
    s["switchinterval"] = sys.getswitchinterval()
    s["socket_timeout"] = socket.getdefaulttimeout()
    s["np_precision"] = np.get_printoptions()["precision"]
    s["np_err"] = sorted(np.geterr().items())
    s["csv_limit"] = csv.field_size_limit()
    s["faulthandler"] = faulthandler.is_enabled()
    s["stack_size"] = threading.stack_size()
    s["umask"] = _umask()
    s["sys_path_marker"] = "/nonexistent/rt-marker" in sys.path
    s["env_marker"] = os.environ.get("RT_MARKER")
    s["putenv_marker"] = subprocess.run(["sh", "-c", "echo ${RT_PUTENV:-unset}"], capture_output=True, text=True).stdout.strip()
    s["warn_filters"] = len(warnings.filters)
    s["root_level"] = logging.getLogger().level
    s["root_handlers"] = len(logging.getLogger().handlers)
    s["logging_disable"] = logging.root.manager.disable
    s["tzname"] = list(time.tzname)
    s["nofile"] = list(resource.getrlimit(resource.RLIMIT_NOFILE))
    s["core"] = list(resource.getrlimit(resource.RLIMIT_CORE))
    s["nice"] = os.getpriority(os.PRIO_PROCESS, 0)
    s["dlopenflags"] = sys.getdlopenflags()
    s["mimetype_rtx"] = mimetypes.guess_type("a.rtx")[0]
    s["copyreg_thing"] = Thing in copyreg.dispatch_table
    s["json_default_patched"] = json.JSONEncoder.default is not _ORIG_JSON_DEFAULT
    s["codec_registered"] = _codec_known()
    s["helper_imported"] = "rt_helper_mod" in sys.modules
    return s


IMPORT_SNAPSHOT = snapshot()


def mutate():
    decimal.getcontext().prec = 5
    sys.setrecursionlimit(600)
    if hasattr(sys, "set_int_max_str_digits"):
        sys.set_int_max_str_digits(100000)
    gc.disable()
    gc.set_threshold(5000, 20, 20)
    sys.setswitchinterval(0.0005)
    socket.setdefaulttimeout(3.0)
    np.set_printoptions(precision=2)
    np.seterr(divide="raise")
    csv.field_size_limit(10)
    faulthandler.enable()
    threading.stack_size(1 << 20)
    os.umask(0o077)
    sys.path.insert(0, "/nonexistent/rt-marker")
    os.environ["RT_MARKER"] = "1"
    os.putenv("RT_PUTENV", "set")
    warnings.simplefilter("ignore")
    logging.basicConfig(level=logging.DEBUG)
    logging.getLogger().setLevel(logging.DEBUG)
    logging.disable(logging.INFO)
    os.environ["TZ"] = "Asia/Tokyo"
    time.tzset()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, 400), hard))
    resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))
    os.nice(1)
    sys.setdlopenflags(os.RTLD_NOW | os.RTLD_GLOBAL)
    mimetypes.add_type("application/x-rt", ".rtx")
    copyreg.pickle(Thing, lambda t: (Thing, ()))
    json.JSONEncoder.default = lambda self, o: repr(o)
    codecs.register(lambda name: codecs.lookup("utf-8") if name == "rt_codec" else None)
    import rt_helper_mod  # noqa: F401


def evaluate(params, threads=1):
    x = float(params["x"])
    now = snapshot()
    diff = sorted(k for k in now if now[k] != IMPORT_SNAPSHOT[k])
    mutate()
    time.sleep(0.1)
    return {"loss": (x - 0.3) ** 2, "diff": diff}
