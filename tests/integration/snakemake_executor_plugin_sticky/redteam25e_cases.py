"""The fifth sticky red team's cases (issue 25, 2026-12-05): written from docs/sticky.md and README.md only."""

# ruff: noqa: E501
import functools

from redteam_cases import DEFAULT_BUILD, HEADER, add_case  # noqa: F401

CASES = {}
case = functools.partial(add_case, CASES)

# ---------------------------------------------------------------------------
# 1. How a job ends: atexit handlers, weakref.finalize, __del__, threads,
#    executors, multiprocessing children, logging, open files.
# ---------------------------------------------------------------------------

# One script, nine ways of making finalizers and atexit handlers; each job k
# writes to its log the order in which its exit steps ran. Used by two cases:
# one whose template makes no finalizer, one whose template makes one (a fresh
# job then registers weakref's exit function while it builds the template, so
# the script's finalizers all run after the script's atexit handlers).
FINALIZE_ORDER_SCRIPT = r"""
import atexit, os, sys, threading, time, weakref

_FD = os.open(LOG, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)


def note(msg, _w=os.write, _fd=_FD):
    _w(_fd, (str(msg) + "\n").encode())


class Obj:
    pass


def say(tag, _note=note):
    return lambda: _note(tag)


note(f"job {k}")
if k == 1:
    atexit.register(say("atexit A"))
    o1 = Obj(); weakref.finalize(o1, note, "finalizer F")
    atexit.register(say("atexit B"))
elif k == 2:
    o1 = Obj(); weakref.finalize(o1, note, "finalizer F1")
    atexit.register(say("atexit A"))
    o2 = Obj(); weakref.finalize(o2, note, "finalizer F2")
elif k == 3:
    atexit.register(say("atexit A"))
    os.environ["RT25E_FIN_LOG"] = LOG
    import rt25e_finlib  # a library that makes a finalizer as it is imported
    atexit.register(say("atexit B"))
    o2 = Obj(); weakref.finalize(o2, note, "finalizer F2")
elif k == 4:
    atexit.register(say("atexit A"))
    o1 = Obj(); f1 = weakref.finalize(o1, note, "finalizer F (atexit=False, object a global)"); f1.atexit = False
    o2 = Obj(); weakref.finalize(o2, note, "finalizer G")
elif k == 5:
    o5 = Obj()

    def make_finalizer_at_exit():
        note("atexit A makes a finalizer")
        weakref.finalize(o5, note, "finalizer made by atexit A")

    atexit.register(make_finalizer_at_exit)
elif k == 6:
    o1 = Obj(); o2 = Obj()

    def chain():
        note("finalizer F1 makes F2 and registers atexit H")
        weakref.finalize(o2, note, "finalizer F2 (made by F1)")
        atexit.register(say("atexit H (registered by F1)"))

    weakref.finalize(o1, chain)
elif k == 7:
    o0 = Obj(); weakref.finalize(o0, note, "finalizer D")
    o3 = Obj()

    class MakesAtDel:
        def __del__(self, _note=note, _fin=weakref.finalize, _reg=atexit.register, _o3=o3):
            _note("__del__ makes a finalizer and registers an atexit handler")
            _fin(_o3, _note, "finalizer made by __del__")
            _reg(_note, "atexit handler registered by __del__")

    m = MakesAtDel()
elif k == 8:
    atexit.register(say("atexit M (main thread)"))
    o8 = Obj()

    def late():
        time.sleep(0.3)
        atexit.register(say("atexit T (registered by a thread after the script ended)"))
        weakref.finalize(o8, note, "finalizer T (made by that thread)")

    threading.Thread(target=late).start()
elif k == 9:
    o1, o2, o3 = Obj(), Obj(), Obj()
    f1 = weakref.finalize(o1, note, "finalizer F1 called early")
    f2 = weakref.finalize(o2, note, "finalizer F2 (detached: never)")
    f3 = weakref.finalize(o3, note, "finalizer F3 (its object deleted early)")
    f1()
    f1()
    note(f"F1 alive after its call: {f1.alive}")
    note(f"F2 detached: {f2.detach() is not None}, alive {f2.alive}")
    del o3
    note(f"F3 alive after del: {f3.alive}")
    atexit.register(say("atexit A"))

with open(OUT, "w") as f:
    f.write(f"job {k} body done\n")
"""

FINLIB_FILES = {
    "scripts/rt25e_finlib.py": (
        '"""A library that makes a weakref.finalize as it is imported."""\n'
        "import os\n"
        "import weakref\n"
        "\n"
        "\n"
        "class _Resource:\n"
        "    pass\n"
        "\n"
        "\n"
        "RESOURCE = _Resource()\n"
        '_fd = os.open(os.environ["RT25E_FIN_LOG"], os.O_WRONLY | os.O_APPEND)\n'
        'weakref.finalize(RESOURCE, os.write, _fd, b"finalizer FH (made by a library as it was imported)\\n")\n'
    ),
}

case(
    "finalize_atexit_interleaving",
    "docs: an invocation ends the way `python script.py` ends: the script's atexit handlers run, weakref.finalize objects marked "
    "for exit run (fork mode: interleaved with the atexit handlers, since weakref registers its exit function with atexit when "
    "the process's first finalizer is made; the direct-mode-only known difference says they run after). Nine jobs: finalizers "
    "made before/between/after atexit handlers, by a library as it is imported, with atexit=False, by an atexit handler (after "
    "atexit ran: never by atexit), by another finalizer (run in the same pass), by __del__ during teardown (never: weakref's "
    "shutdown flag), by a thread while the main thread waits, detached and called early. Expect the job's exit order, or the "
    "'shutdown' flag, to differ from a fresh interpreter in some of them.",
    script=FINALIZE_ORDER_SCRIPT,
    n=9,
    files=FINLIB_FILES,
)

case(
    "finalize_atexit_interleaving_template_finalizer",
    "as finalize_atexit_interleaving, but the template makes a weakref.finalize while it builds: in a fresh job weakref's exit "
    "function is then registered by the build (before every atexit handler of the script), so all the script's finalizers "
    "run after all its atexit handlers. In a forked job the template's finalizer must not run, and the order must follow the "
    "fresh job's registration order, not the worker's.",
    script=FINALIZE_ORDER_SCRIPT,
    build="""    import weakref

    class Model:
        pass

    model = Model()
    weakref.finalize(model, int)  # the template's own finalizer (a no-op)
    return {"calls": 0, "model": model}""",
    n=9,
    files=FINLIB_FILES,
)

case(
    "exit_error_channels",
    "a fresh interpreter reports an exception in an atexit handler through sys.unraisablehook ('Exception ignored in atexit "
    "callback'), one in a finalizer through sys.excepthook (weakref's exit function catches Exception), one in __del__ at "
    "teardown through sys.unraisablehook, and a SystemExit raised in an atexit handler or a finalizer changes nothing of the "
    "exit status (0) but a SystemExit in a finalizer ends weakref's exit pass: the finalizers made before it never run. The "
    "script installs both hooks, writing to its log. Expect the emulated exit to use other channels, fail the job on the "
    "SystemExit, or go on running the remaining finalizers.",
    script=r"""
import atexit, os, sys, weakref

_FD = os.open(LOG, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)


def note(msg, _w=os.write, _fd=_FD):
    _w(_fd, (str(msg) + "\n").encode())


def unraisable(u, _note=note, _getattr=getattr, _type=type):
    obj = u.object
    name = _getattr(obj, "__qualname__", None) or _type(obj).__name__
    _note(f"unraisablehook: {u.err_msg} | {name} | {_type(u.exc_value).__name__}: {u.exc_value}")


def excepthook(t, v, tb, _note=note):
    _note(f"excepthook: {t.__name__}: {v}")


sys.unraisablehook = unraisable
sys.excepthook = excepthook


class Obj:
    pass


def raise_value(msg):
    raise ValueError(msg)


def raise_exit(code):
    raise SystemExit(code)


def noted(msg):
    note(msg)


if k == 1:
    atexit.register(noted, "atexit registered first (runs last)")
    atexit.register(raise_value, "from an atexit handler")
    o1 = Obj(); weakref.finalize(o1, raise_value, "from a finalizer")
    o2 = Obj(); weakref.finalize(o2, noted, "finalizer ok")
    atexit.register(raise_exit, 4)

    class D:
        def __del__(self):
            raise RuntimeError("from __del__")

    d = D()
else:
    atexit.register(noted, "atexit registered first (runs last)")
    o0 = Obj(); weakref.finalize(o0, noted, "finalizer made before the one that raises SystemExit")
    o1 = Obj(); weakref.finalize(o1, raise_exit, 5)
    o2 = Obj(); weakref.finalize(o2, raise_value, "finalizer made after the one that raises SystemExit")
    atexit.register(noted, "atexit registered last (runs first)")

with open(OUT, "w") as f:
    f.write(f"job {k} body done\n")
""",
    n=2,
)

case(
    "dunder_file_at_exit",
    "CPython runs `python script.py` with __file__ and __cached__ set in __main__ and deletes both when the script's code "
    "returns normally, before atexit handlers, finalizers and teardown (but not when it ends with sys.exit, which finalizes "
    "at once). Snakemake's preamble sets __file__ to the real script path. An atexit handler, a finalizer and a __del__ "
    "record which names they see. Expect the sticky exit to leave __file__/__cached__ in place after a normal end.",
    script=r"""
import atexit, os, sys, weakref

_FD = os.open(LOG, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)


def note(msg, _w=os.write, _fd=_FD):
    _w(_fd, (str(msg) + "\n").encode())


def report(where, _note=note):
    g = globals()
    _note(f"{where}: __file__ {'__file__' in g}, __cached__ {'__cached__' in g}, __real_file__ {'__real_file__' in g}, __name__ {g.get('__name__')}")


report("body")
atexit.register(report, "atexit")


class Holder:
    pass


h = Holder()
weakref.finalize(h, report, "finalizer")


class AtDel:
    def __del__(self):
        report("__del__")


d = AtDel()
with open(OUT, "w") as f:
    f.write(f"job {k}\n")
if k == 2:
    sys.exit(0)
""",
    n=2,
)

case(
    "del_print_after_stdout_restored",
    "a fresh interpreter puts sys.stdout back to sys.__stdout__ before it clears modules and collects garbage, so a __del__ "
    "that prints at teardown writes to the real stdout, not to the log the script redirected sys.stdout to; the atexit "
    "handler's and the finalizer's prints (before teardown) do reach the log. Expect the sticky exit, which clears the "
    "script's globals itself, to run those __del__ prints while sys.stdout is still the log.",
    script=r"""
import atexit, gc, sys, weakref

log = open(LOG, "w")
sys.stdout = log
print("body")


class Closer:
    def __init__(self, name):
        self.name = name

    def __del__(self):
        print(f"__del__ {self.name}")


class Cycle:
    def __init__(self):
        self.me = self

    def __del__(self):
        print("__del__ of a garbage cycle")


closer = Closer("of a global")
gc.disable()
Cycle()
atexit.register(print, "atexit handler")
holder = Closer("of the object a finalizer watches")
weakref.finalize(holder, print, "finalizer")
with open(OUT, "w") as f:
    f.write("ok\n")
""",
)

case(
    "teardown_del_order",
    "at a fresh interpreter's teardown the script's globals die in one garbage collection of __main__'s dict (functions refer "
    "to it), so __del__ methods run in allocation order, not in the order the names were bound; clearing the globals dict "
    "instead runs them in binding order. Two objects are made in one order and bound in the other; a third is in a cycle.",
    script=r"""
import os

_FD = os.open(LOG, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)


class Noisy:
    def __init__(self, name, _w=os.write, _fd=_FD):
        self.name, self._w, self._fd = name, _w, _fd

    def __del__(self):
        self._w(self._fd, f"__del__ {self.name}\n".encode())


made_first = Noisy("made first, bound second")
a = Noisy("made second, bound first")
b = made_first
del made_first
c = Noisy("in a cycle")
c.me = c
with open(OUT, "w") as f:
    f.write("ok\n")
""",
)

case(
    "unclosed_writers_held_outside_script_globals",
    "docs: 'the script's globals are cleared and collected, so a file the script left open is flushed and closed'. A fresh "
    "interpreter flushes every file object it frees at teardown, wherever it is kept: in a helper module the job imported, in "
    "the template's state, in a library module the template imported, behind a signal handler or sys.excepthook. Ten jobs "
    "each leave their output in one such writer (gzip and zip writers need their close to be valid; __del__ trailers). Expect "
    "the writers not reachable from the script's globals alone to lose their buffered data in sticky jobs.",
    script=r"""
import gzip, io, signal, sys, zipfile

import rt25e_jholder


class Trailer:
    def __init__(self, path, line):
        self.path, self.line = path, line

    def __del__(self):
        with open(self.path, "ab") as f:
            f.write(self.line)


class Writer:
    def __init__(self, path):
        self.f = open(path, "w")

    def on_term(self, signum, frame):
        self.f.write("terminated\n")

    def hook(self, t, v, tb):
        self.f.write(f"uncaught {t.__name__}\n")


text = "".join(f"job {k} line {i}\n" for i in range(3))
holder = st["holder"]
if k == 1:  # a file left open in a script global
    f = open(OUT, "w")
    f.write(text)
elif k == 2:  # ... also kept by a helper module the job imports
    f = rt25e_jholder.keep("sink", open(OUT, "w"))
    f.write(text)
elif k == 3:  # ... also kept in the template's state
    f = st["sink"] = open(OUT, "w")
    f.write(text)
elif k == 4:  # ... also kept by a library module the template imported
    f = holder.HELD["sink"] = open(OUT, "w")
    f.write(text)
elif k == 5:  # a gzip stream kept by that library: its trailer is written when it is closed
    gz = holder.HELD["gz"] = io.TextIOWrapper(gzip.GzipFile(OUT, "wb", mtime=0), encoding="utf-8")
    gz.write(text)
elif k == 6:  # a zip archive in a script global: its directory is written when it is collected
    zf = zipfile.ZipFile(OUT, "w")
    zf.writestr(zipfile.ZipInfo("part.txt", date_time=(2020, 1, 1, 0, 0, 0)), text)
elif k == 7:
    with open(OUT, "w") as out:
        out.write(text)
    st["trailer"] = Trailer(OUT, b"trailer kept in the template's state\n")
elif k == 8:
    with open(OUT, "w") as out:
        out.write(text)
    trailer = rt25e_jholder.keep("trailer", Trailer(OUT, b"trailer kept by a helper module\n"))
elif k == 9:
    w = Writer(OUT)
    w.f.write(text)
    signal.signal(signal.SIGTERM, w.on_term)
elif k == 10:
    w = Writer(OUT)
    w.f.write(text)
    sys.excepthook = w.hook
""",
    build="""    import os
    import sys

    for base in (os.path.dirname(os.path.abspath(__file__)), os.getcwd()):
        d = os.path.join(base, "scripts")
        if os.path.isdir(d) and d not in sys.path:
            sys.path.append(d)
    import rt25e_tholder

    return {"calls": 0, "holder": rt25e_tholder}""",
    n=10,
    files={
        "scripts/rt25e_tholder.py": '"""A library module the template imports: a module-level registry of open handles."""\nHELD = {}\n',
        "scripts/rt25e_jholder.py": (
            '"""A helper module only the job imports: it keeps what it is given."""\n'
            "HELD = {}\n"
            "\n"
            "\n"
            "def keep(key, obj):\n"
            "    HELD[key] = obj\n"
            "    return obj\n"
        ),
    },
)

case(
    "exit_threads_timers_executors",
    "docs: non-daemon threads are joined and unfinished concurrent.futures pools finish their queued work before the "
    "atexit handlers run. A fresh interpreter joins threads started by other threads while it waits, runs a Timer, "
    "lets a thread register an atexit handler while it waits (it then runs first), kills a daemon thread, and refuses "
    "executor.submit from an atexit handler ('cannot schedule new futures after interpreter shutdown').",
    script=r"""
import atexit, concurrent.futures, threading, time

events = []
order = []
lock = threading.Lock()


def ev(s):
    with lock:
        events.append(s)


ex = concurrent.futures.ThreadPoolExecutor(max_workers=1)
for i in range(3):
    ex.submit(lambda i=i: (time.sleep(0.05), ev(f"task {i}")))
threading.Timer(0.3, ev, ["timer"]).start()


def t2():
    time.sleep(0.2)
    ev("t2 (started by t1)")
    atexit.register(lambda: order.append("atexit registered by t2"))


def t1():
    time.sleep(0.2)
    threading.Thread(target=t2).start()
    ev("t1")


threading.Thread(target=t1).start()
threading.Thread(target=lambda: (time.sleep(5), ev("daemon")), daemon=True).start()


def late_submit():
    try:
        ex.submit(ev, "late")
        order.append("late submit accepted")
    except RuntimeError as e:
        order.append(f"late submit: {e}")


def write_out():
    order.append(f"main thread alive in atexit: {threading.main_thread().is_alive()}")
    with open(OUT, "w") as f:
        f.write("events: " + ", ".join(sorted(events)) + "\n")
        f.write("atexit: " + " | ".join(order) + "\n")


atexit.register(write_out)  # registered first: runs last
atexit.register(late_submit)
""",
)

case(
    "thread_waits_for_main_thread_end",
    "a common pattern for a background (non-daemon) thread: loop while threading.main_thread().is_alive(). A fresh "
    "interpreter marks the main thread stopped (threading._shutdown) before it joins the other threads, so such a thread "
    "sees the end of the script and finishes. Expect a sticky job that joins threads without marking its main thread "
    "stopped to wait (here: 20 s, then the thread gives up and says so).",
    script=r"""
import threading, time


def monitor():
    start = time.monotonic()
    while threading.main_thread().is_alive():
        if time.monotonic() - start > 20:
            with open(OUT, "a") as f:
                f.write("monitor gave up: the main thread never ended\n")
            return
        time.sleep(0.05)
    with open(OUT, "a") as f:
        f.write("monitor saw the main thread end\n")


threading.Thread(target=monitor).start()
with open(OUT, "w") as f:
    f.write("body done\n")
""",
    build='    return {"calls": 0, "own_worker": "thread_waits_for_main_thread_end"}',
    n=1,
)

case(
    "exit_mp_children_pools_finalizers",
    "docs: multiprocessing children are joined (daemonic ones terminated) and its finalizers run. A non-daemon child "
    "writes the job's output 3 s after the script ends (the job is done only after it), a daemon child would write to "
    "the log after 3 s (terminated in a fresh run), multiprocessing.util.Finalize objects run by priority, a "
    "ProcessPoolExecutor left open finishes its work before the atexit handler (registered after multiprocessing was "
    "imported, so it runs before multiprocessing's own exit) reads the results and the children's names.",
    script=r"""
import atexit, concurrent.futures, os, time
import multiprocessing as mp
from multiprocessing import util as mputil

_FD = os.open(LOG, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)


def note(msg, _w=os.write, _fd=_FD):
    _w(_fd, (str(msg) + "\n").encode())


ctx = mp.get_context("fork")


def child_writes_out():
    time.sleep(3)
    with open(OUT, "w") as f:
        f.write("written by a non-daemon child after the script ended\n")


def daemon_writes_log():
    time.sleep(3)
    note("daemon child still ran (a fresh run terminates it)")


p = ctx.Process(target=child_writes_out)
p.start()
d = ctx.Process(target=daemon_writes_log, daemon=True)
d.start()


class Res:
    pass


r = Res()
mputil.Finalize(r, note, args=("mp finalizer, exitpriority 5",), exitpriority=5)
mputil.Finalize(None, note, args=("mp finalizer, exitpriority 0",), exitpriority=0)
mputil.Finalize(None, note, args=("mp finalizer, exitpriority 10",), exitpriority=10)
ppe = concurrent.futures.ProcessPoolExecutor(max_workers=2, mp_context=ctx)
results = []
for i in range(5):
    ppe.submit(pow, 3, i).add_done_callback(lambda fu: results.append(fu.result()))


def at_exit():
    note("atexit: children " + ", ".join(sorted(c.name for c in mp.active_children())))
    note("atexit: results " + ", ".join(map(str, sorted(results))))
    note(f"atexit: output exists yet {os.path.exists(OUT)}")


atexit.register(at_exit)
note("body done")
""",
)

case(
    "script_forks_child_exits",
    "a script that calls os.fork() itself and lets the child end with sys.exit(3), an uncaught exception, or by running off "
    "the end of the script. In a fresh run the child is an ordinary interpreter: it runs the inherited atexit handler and "
    "exits with 3, 1 or 0, and the parent (which waits for it) writes the output. Expect a forked sticky job's own child to "
    "return into the worker's invocation code instead (reporting a result, running the job's exit steps, or leaving "
    "without the atexit handler).",
    script=r"""
import atexit, os, sys

ROLE = "parent"


def note(msg):
    with open(LOG, "a") as f:
        f.write(msg + "\n")


with open(LOG, "w") as f:
    f.write("before fork\n")
atexit.register(lambda: note(f"atexit in the {ROLE}"))
pid = os.fork()
if pid == 0:
    ROLE = "child"
    note("child working")
    if k == 1:
        sys.exit(3)
    elif k == 2:
        raise ValueError("the child failed")
    # k == 3: the child runs off the end of the script
else:
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    note(f"child exit code {code}")
    with open(OUT, "w") as f:
        f.write(f"parent done, child exit code {code}\n")
""",
    n=3,
    build='    return {"calls": 0, "own_worker": "script_forks_child_exits"}',
)

case(
    "stdout_tee_without_flush",
    "a Tee object without flush() as sys.stdout (a common snippet): print works, but a fresh interpreter's final flush of "
    "sys.stdout fails ('Exception ignored ... AttributeError') and the process exits with status 120, so the job fails under "
    "--executor local. Expect a sticky job to succeed.",
    script=r"""
import sys


class Tee:
    def __init__(self, *streams):
        self.streams = streams

    def write(self, s):
        for x in self.streams:
            x.write(s)
        return len(s)


logf = open(LOG, "w")
sys.stdout = Tee(sys.stdout, logf)
print("hello from the job")
with open(OUT, "w") as f:
    f.write("ok\n")
""",
    n=1,
)

case(
    "stdout_flush_raises_at_exit",
    "as stdout_tee_without_flush, with a sys.stdout whose flush() raises OSError: exit status 120 in a fresh interpreter "
    "(the job fails under --executor local).",
    script=r"""
import sys


class GoneSink:
    def __init__(self, f):
        self.f = f

    def write(self, s):
        self.f.write(s)
        return len(s)

    def flush(self):
        raise OSError("the sink is gone")


logf = open(LOG, "w")
sys.stdout = GoneSink(logf)
print("hello from the job")
with open(OUT, "w") as f:
    f.write("ok\n")
""",
    n=1,
)

case(
    "sys_exit_numpy_int_zero",
    "docs: sys.exit(N) ends with status N % 256. CPython takes the status only from an int: sys.exit(numpy.int64(0)) (a count "
    "of failures from numpy or pandas) prints 0 to stderr and exits with status 1, so the job fails under --executor local. "
    "Expect the sticky job to treat it as 0 and succeed.",
    script=r"""
import sys
import numpy as np

with open(OUT, "w") as f:
    f.write("ok\n")
failures = np.zeros(3, dtype=np.int64).sum()
sys.exit(failures)
""",
    n=1,
)

case(
    "sys_exit_numpy_bool_false",
    "as sys_exit_numpy_int_zero, with sys.exit(np.any(errors)) (a numpy bool False, not an int): status 1 in a fresh "
    "interpreter.",
    script=r"""
import sys
import numpy as np

with open(OUT, "w") as f:
    f.write("ok\n")
errors = np.array([False, False])
sys.exit(np.any(errors))
""",
    n=1,
)

case(
    "logging_buffered_handlers_at_exit",
    "a job's MemoryHandler in front of a FileHandler(mode='w') on its log: logging.shutdown at a fresh exit flushes and "
    "closes handlers newest first, so the buffered records reach the file before it is closed (closed first, a 'w' "
    "FileHandler drops them). The records show thread and process names. The output lists the root logger's handlers "
    "and level as a fresh job has them.",
    script=r"""
import logging, logging.handlers, threading

fh = logging.FileHandler(LOG, mode="w")
fh.setFormatter(logging.Formatter("%(levelname)s %(name)s %(threadName)s %(processName)s %(message)s"))
mem = logging.handlers.MemoryHandler(capacity=100, flushLevel=logging.CRITICAL, target=fh)
log = logging.getLogger("rt25e.job")
log.setLevel(logging.INFO)
log.addHandler(mem)
log.propagate = False
log.info("main record of job %d", k)
t = threading.Thread(target=log.info, args=("thread record",))
t.start()
t.join()
root = logging.getLogger()
with open(OUT, "w") as f:
    f.write(f"root level {root.level}, handlers {[type(h).__name__ for h in root.handlers]}, lastResort {logging.lastResort is not None}, raiseExceptions {logging.raiseExceptions}\n")
""",
)

case(
    "thread_process_task_names",
    "names a fresh process gives: Thread-1 (<lambda>), ThreadPoolExecutor-0_0, Process-1, ForkPoolWorker-N, Task-1, "
    "MainThread/MainProcess. They come from counters in the threading, concurrent.futures, multiprocessing and asyncio "
    "modules, which a forked child inherits from the worker (and logging's %(threadName)s/%(processName)s prints them). "
    "Two chained jobs: the second must see the same names.",
    script=r"""
import asyncio, concurrent.futures, threading
import multiprocessing as mp

names = []
t = threading.Thread(target=lambda: names.append(threading.current_thread().name))
t.start()
t.join()
names.append(threading.Thread(target=print).name)
names.append(threading.Timer(1, print).name)
names.append(threading.current_thread().name)
names.append(threading.main_thread().name)
names.append(str(threading.current_thread() is threading.main_thread()))
with concurrent.futures.ThreadPoolExecutor(1) as ex:
    names.append(ex.submit(lambda: threading.current_thread().name).result())
ctx = mp.get_context("fork")
p = ctx.Process(target=print, args=("",))
names.append(p.name)
names.append(mp.current_process().name)


def procname(_):
    return mp.current_process().name


with ctx.Pool(1) as pool:
    names.append(pool.map(procname, [0])[0])


async def main():
    inner = asyncio.create_task(asyncio.sleep(0))
    await inner
    return [asyncio.current_task().get_name(), inner.get_name()]


names += asyncio.run(main())
with open(OUT, "w") as f:
    f.write("\n".join(names) + "\n")
""",
    n=2,
)

case(
    "lazy_proxy_evaluated_at_exit",
    "a helper module in the style of a Django settings/db module holds a lazy proxy (SimpleLazyObject, "
    "lazy_object_proxy: its __class__ is a property that evaluates the factory, a database connection made on first "
    "use). The job imports the module and never uses the connection: a fresh job never calls the factory. Job 1's "
    "factory writes to the log, job 2's raises (the database is unreachable). An exit step that walks every live "
    "object (isinstance(o, io.IOBase) reads o.__class__) evaluates them.",
    script=r"""
import os

with open(LOG, "w") as f:
    f.write(f"job {k}\n")
os.environ["RT25E_LAZY_LOG"] = LOG
os.environ["RT25E_LAZY_FAIL"] = "1" if k == 2 else "0"
from rt25e_lazydb import db  # noqa: F401  (imported, never used)

with open(OUT, "w") as f:
    f.write("ok\n")
""",
    n=2,
    files={
        "scripts/rt25e_lazydb.py": (
            '"""A db module in the style of Django: its connection is a lazy object, made on first use."""\n'
            "import os\n"
            "\n"
            "\n"
            "class Lazy:\n"
            "    def __init__(self, factory):\n"
            '        self.__dict__["_factory"] = factory\n'
            '        self.__dict__["_wrapped"] = None\n'
            "\n"
            "    def _setup(self):\n"
            '        if self.__dict__["_wrapped"] is None:\n'
            '            self.__dict__["_wrapped"] = self.__dict__["_factory"]()\n'
            '        return self.__dict__["_wrapped"]\n'
            "\n"
            "    __class__ = property(lambda self: self._setup().__class__)\n"
            "\n"
            "    def __getattr__(self, name):\n"
            "        return getattr(self._setup(), name)\n"
            "\n"
            "\n"
            "def _connect():\n"
            '    with open(os.environ["RT25E_LAZY_LOG"], "a") as f:\n'
            '        f.write("factory ran: connected\\n")\n'
            '    if os.environ.get("RT25E_LAZY_FAIL") == "1":\n'
            '        raise ConnectionError("the database is unreachable")\n'
            '    return {"connection": 1}\n'
            "\n"
            "\n"
            "db = Lazy(_connect)\n"
        ),
    },
)

case(
    "daemon_thread_file_never_flushed",
    "a daemon thread holds an open, buffered file (its log) and blocks forever. A fresh interpreter never frees a "
    "daemon thread's frame at exit, so the buffered line is lost (the log stays empty). An exit step that flushes "
    "every file object it finds writes it.",
    script=r"""
import threading

ready = threading.Event()


def logger_thread():
    f = open(LOG, "w")
    f.write("the daemon thread's buffered line\n")
    ready.set()
    threading.Event().wait()


threading.Thread(target=logger_thread, daemon=True).start()
ready.wait()
with open(OUT, "w") as f:
    f.write("ok\n")
""",
    n=2,
)

case(
    "os_exit_skips_flush_and_atexit",
    "a script that ends with os._exit(0) (to skip a slow teardown) after writing its output through a buffered file "
    "it never closed, with an atexit handler registered: a fresh process exits at once, the buffered output is lost "
    "(an empty file, the job succeeds) and the handler never runs. Docs: os._exit(n) ends the job as under local.",
    script=r"""
import atexit

atexit.register(lambda: open(LOG, "w").write("atexit ran\n"))
out = open(OUT, "w")
out.write("buffered, never flushed\n")
import os

os._exit(0)
""",
    n=2,
)

case(
    "unclosed_pipe_to_dead_process",
    "the job writes to a subprocess's stdin after the process has exited and never closes the pipe: the write sits in "
    "the buffer, and a fresh interpreter's teardown flush gets BrokenPipeError, prints 'Exception ignored' and exits "
    "with status 0 (the job succeeds).",
    script=r"""
import subprocess

p = subprocess.Popen(["true"], stdin=subprocess.PIPE)
p.wait()
p.stdin.write(b"x" * 100)
with open(OUT, "w") as f:
    f.write(f"child exited with {p.returncode}\n")
""",
    n=2,
)

# ---------------------------------------------------------------------------
# 1b. What the template owns: its processes, pools, finalizers, files,
#     teardown and log handlers, seen from the job's end.
# ---------------------------------------------------------------------------

case(
    "template_mp_server_process",
    "the template starts a daemon multiprocessing server (fork context) with a Pipe. A fresh job can ask it is_alive(), "
    "join(timeout=0), exitcode and active_children(), talk to it, and terminates it at exit (daemon). In a forked job "
    "the server is the template's child: multiprocessing asserts 'can only test a child process' where a fresh job gets "
    "True; and the job's end must not terminate it (the next job must still be answered).",
    build="""    import multiprocessing as mp

    ctx = mp.get_context("fork")
    a, b = ctx.Pipe()

    def serve(conn):
        while True:
            try:
                req = conn.recv()
            except EOFError:
                return
            conn.send(("served", req, req * req))

    p = ctx.Process(target=serve, args=(b,), daemon=True, name="rt25e-server")
    p.start()
    b.close()
    return {"calls": 0, "server": p, "conn": a}""",
    script=r"""
import multiprocessing as mp

p = st["server"]
lines = [f"name {p.name}", f"daemon {p.daemon}"]
for label, fn in (("is_alive", p.is_alive), ("join(timeout=0)", lambda: p.join(timeout=0)), ("exitcode", lambda: p.exitcode)):
    try:
        lines.append(f"{label} {fn()}")
    except Exception as e:
        lines.append(f"{label} raised {type(e).__name__}: {e}")
lines.append("active_children " + ", ".join(sorted(c.name for c in mp.active_children())))
lines.append(f"current_process {mp.current_process().name}, parent_process {mp.parent_process()}")
try:
    st["conn"].send(k)
    lines.append(f"reply {st['conn'].recv() if st['conn'].poll(10) else 'none in 10 s'}")
except Exception as e:
    lines.append(f"talking to the server raised {type(e).__name__}")
with open(OUT, "w") as f:
    f.write("\n".join(lines) + "\n")
""",
    n=3,
)

case(
    "template_pools_used_in_build",
    "the template builds a ThreadPoolExecutor and a multiprocessing Pool and uses both (their threads run, so the template "
    "runs in direct mode, as documented). A fresh job uses them and shuts them down at its exit (concurrent.futures' exit "
    "hook, the Pool's multiprocessing finalizer). The job's end on a sticky worker must do neither to the template's "
    "pools: the next job must still be able to submit ('cannot schedule new futures after interpreter shutdown', 'Pool "
    "not running' would differ).",
    build="""    import concurrent.futures
    import multiprocessing as mp

    ex = concurrent.futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="rt25e-tpe")
    assert list(ex.map(abs, [-1, -2])) == [1, 2]
    pool = mp.get_context("fork").Pool(2)
    assert pool.map(abs, [-3]) == [3]
    return {"calls": 0, "ex": ex, "pool": pool}""",
    script=r"""
out = []
try:
    out.append("executor " + repr(list(st["ex"].map(abs, [-k, -2 * k]))))
except Exception as e:
    out.append(f"executor raised {type(e).__name__}: {e}")
try:
    out.append("pool " + repr(st["pool"].map(abs, [-k, -3 * k])))
except Exception as e:
    out.append(f"pool raised {type(e).__name__}: {e}")
try:
    out.append("pool async " + repr(st["pool"].apply_async(pow, (2, k)).get(10)))
except Exception as e:
    out.append(f"pool async raised {type(e).__name__}: {e}")
with open(OUT, "w") as f:
    f.write("\n".join(out) + "\n")
""",
    n=3,
)

case(
    "template_finalizers_seen_by_job",
    "the template makes three weakref.finalize objects on objects of its state. A fresh job sees them alive, with "
    "atexit flags and peek(); calling one early runs it once, detach() returns its tuple, deleting a watched object runs "
    "its finalizer. Keeping the template's finalizers from running at a job's end must not make them look dead or "
    "inert during the job.",
    build="""    import weakref

    class Res:
        pass

    log = []
    r1, r2, r3 = Res(), Res(), Res()
    f1 = weakref.finalize(r1, log.append, "f1 ran")
    f2 = weakref.finalize(r2, log.append, "f2 ran")
    f3 = weakref.finalize(r3, log.append, "f3 ran")
    f3.atexit = False
    return {"log": log, "r1": r1, "r2": r2, "r3": r3, "f1": f1, "f2": f2, "f3": f3}""",
    script=r"""
f1, f2, f3 = st["f1"], st["f2"], st["f3"]
lines = [
    f"alive {[f.alive for f in (f1, f2, f3)]}",
    f"atexit {[f.atexit for f in (f1, f2, f3)]}",
    f"peek f1 {None if f1.peek() is None else f1.peek()[2]}",
]
f1()
f1()
d = f2.detach()
lines.append(f"detach f2 {None if d is None else d[2]}")
del st["r3"]
lines.append(f"log {st['log']}")
lines.append(f"alive after {[f.alive for f in (f1, f2, f3)]}")
with open(OUT, "w") as f:
    f.write("\n".join(lines) + "\n")
""",
    n=3,
)

case(
    "template_tempdir_dropped_by_job",
    "the template keeps a tempfile.TemporaryDirectory with a file in it. Job 2 drops it from the state when done (in a "
    "fresh job its finalizer removes the job's own directory at once). A forked job must not remove the template's "
    "directory (job 3 must still read the file) and yet, like a fresh job, see its directory gone after dropping it: "
    "expect one of the two to differ.",
    build="""    import os
    import tempfile

    td = tempfile.TemporaryDirectory(prefix="rt25e-")
    with open(os.path.join(td.name, "vocab.txt"), "w") as f:
        f.write("alpha\\nbeta\\n")
    return {"td": td, "path": td.name}""",
    script=r"""
import gc, os

path = st["path"]
lines = []
try:
    with open(os.path.join(path, "vocab.txt")) as f:
        lines.append("vocab " + " ".join(f.read().split()))
except OSError as e:
    lines.append(f"vocab unreadable: {type(e).__name__}")
if k == 2:
    st["td"] = None  # done with it
    gc.collect()
    lines.append(f"directory exists after the job dropped it: {os.path.isdir(path)}")
with open(OUT, "w") as f:
    f.write("\n".join(lines) + "\n")
""",
    n=3,
)

case(
    "template_scratch_dir_shared",
    "the template makes a scratch directory (tempfile.mkdtemp) and jobs write their temporary files there and list it. "
    "A fresh job has its own, empty one; forked jobs share the template's directory on disk, so a job sees the files of "
    "the jobs before it (not among the documented known differences, which name shared memory only).",
    build="""    import tempfile

    return {"scratch": tempfile.mkdtemp(prefix="rt25e-scratch-")}""",
    script=r"""
import os

with open(os.path.join(st["scratch"], f"part-{k}.txt"), "w") as f:
    f.write(f"{k}\n")
with open(OUT, "w") as f:
    f.write("scratch holds: " + ", ".join(sorted(os.listdir(st["scratch"]))) + "\n")
""",
    n=3,
)

case(
    "template_teardown_writes_job_log",
    "a generator template whose teardown reports into a file the job named in the state (say, usage statistics into the "
    "job's log). A fresh job tears its template down at exit, so the log ends with the teardown's line; a sticky job's "
    "template is torn down when the worker stops (docs), so the line is missing (or, in direct mode, written later into "
    "the last job's log with the count of all jobs).",
    build="""    state = {"report_to": None, "uses": 0}
    yield state
    if state["report_to"]:
        with open(state["report_to"], "a") as f:
            f.write(f"teardown: the state was used {state['uses']} time(s)\\n")""",
    script=r"""
st["uses"] += 1
st["report_to"] = LOG
with open(LOG, "w") as f:
    f.write(f"job {k} used the state\n")
with open(OUT, "w") as f:
    f.write(f"job {k}\n")
""",
    n=2,
)

case(
    "template_memoryhandler_flushed_at_exit",
    "the template configures its logger with a logging.handlers.MemoryHandler (buffering below CRITICAL) in front of a "
    "handler writing to the current sys.stdout. The job redirects sys.stdout to its log and logs three records. A fresh "
    "job's logging.shutdown flushes every handler, the template's included, at exit: the records reach the log. The docs "
    "promise to flush the handlers the script created only.",
    build="""    import logging
    import logging.handlers
    import sys

    class CurrentStdout(logging.Handler):
        def emit(self, record):
            sys.stdout.write(self.format(record) + "\\n")

    target = CurrentStdout()
    target.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
    mem = logging.handlers.MemoryHandler(capacity=1000, flushLevel=logging.CRITICAL, target=target)
    log = logging.getLogger("rt25e.model")
    log.setLevel(logging.INFO)
    log.addHandler(mem)
    log.propagate = False
    return {"logger": log}""",
    script=r"""
import sys

sys.stdout = open(LOG, "w")
log = st["logger"]
for i in range(3):
    log.info("job %d record %d", k, i)
print(f"job {k} body done")
with open(OUT, "w") as f:
    f.write("ok\n")
""",
    n=2,
)

case(
    "template_mp_lock_left_held",
    "the template makes a multiprocessing Lock (fork context) for the job's worker processes; job 1 acquires it and never "
    "releases it (harmless in a fresh process, whose lock dies with it). The lock's semaphore lives in shared memory, so "
    "in forked jobs job 2 cannot acquire it (the docs name shared mmap, Value and share_memory_ tensors; a Lock is the "
    "same kind).",
    build="""    import multiprocessing as mp

    return {"calls": 0, "lock": mp.get_context("fork").Lock()}""",
    script=r"""
if k == 1:
    st["lock"].acquire()
    result = "acquired, not released"
else:
    result = f"acquire(timeout=2) -> {st['lock'].acquire(timeout=2)}"
with open(OUT, "w") as f:
    f.write(result + "\n")
""",
    n=2,
)

TEMPLATE_SCRIPTS_ON_PATH = """    import os
    import sys

    for base in (os.path.dirname(os.path.abspath(__file__)), os.getcwd()):
        d = os.path.join(base, "scripts")
        if os.path.isdir(d) and d not in sys.path:
            sys.path.append(d)
"""

case(
    "template_imported_library_atexit_hook",
    "the template imports a run tracker in the style of mlflow or wandb, which registers an atexit handler as it is "
    "imported to end a run the script left open (status FINISHED, metrics count). The job starts a run logging to its "
    "log and never ends it. In a fresh job the handler (registered while the job built the template) ends the run at "
    "exit. A forked job must run it too, although the template registered it: expect the line to be missing.",
    build=TEMPLATE_SCRIPTS_ON_PATH
    + """    import rt25e_tracker

    return {"calls": 0, "tracker": rt25e_tracker}""",
    script=r"""
tracker = st["tracker"]
with open(LOG, "w") as f:
    f.write(f"job {k}\n")
tracker.start_run(LOG)
for i in range(k + 1):
    tracker.log_metric("loss", 1.0 / (i + 1))
with open(OUT, "w") as f:
    f.write("ok\n")
""",
    n=2,
    files={
        "scripts/rt25e_tracker.py": (
            '"""A run tracker in the style of mlflow/wandb: a run left open is ended at interpreter exit."""\n'
            "import atexit\n"
            "\n"
            "_run = None\n"
            "\n"
            "\n"
            "def start_run(path):\n"
            "    global _run\n"
            '    _run = {"path": path, "metrics": []}\n'
            '    with open(path, "a") as f:\n'
            '        f.write("run started\\n")\n'
            "\n"
            "\n"
            "def log_metric(name, value):\n"
            '    _run["metrics"].append((name, value))\n'
            "\n"
            "\n"
            "def _end_run_at_exit():\n"
            "    if _run is not None:\n"
            '        with open(_run["path"], "a") as f:\n'
            "            f.write(f\"run ended at exit: {len(_run['metrics'])} metric(s), status FINISHED\\n\")\n"
            "\n"
            "\n"
            "atexit.register(_end_run_at_exit)\n"
        ),
    },
)

case(
    "job_tempfiles_cleaned_at_exit",
    "job 1 makes a TemporaryDirectory and a NamedTemporaryFile (in a folder of the workflow) and keeps them in a helper "
    "module's cache without closing them. A fresh interpreter removes both at exit (the directory's finalizer at atexit, "
    "the file when the helper module is cleared at teardown). Job 2 counts what job 1 left behind.",
    script=r"""
import os, shutil, tempfile

import rt25e_jholder

parent = os.path.abspath("rt25e_tmp_job_tempfiles")
if k == 1:
    shutil.rmtree(parent, ignore_errors=True)
    os.makedirs(parent)
    rt25e_jholder.keep("dir", tempfile.TemporaryDirectory(prefix="td-", dir=parent))
    ntf = rt25e_jholder.keep("file", tempfile.NamedTemporaryFile(prefix="ntf-", dir=parent))
    ntf.write(b"scratch")
    result = f"made {len(os.listdir(parent))} entries"
else:
    left = sorted(name.split("-")[0] for name in os.listdir(parent))
    result = f"left behind by job 1: {left}"
with open(OUT, "w") as f:
    f.write(result + "\n")
""",
    n=2,
    files={
        "scripts/rt25e_jholder.py": (
            '"""A helper module only the job imports: it keeps what it is given."""\n'
            "HELD = {}\n"
            "\n"
            "\n"
            "def keep(key, obj):\n"
            "    HELD[key] = obj\n"
            "    return obj\n"
        ),
    },
)

# ---------------------------------------------------------------------------
# 2. The 'a job ... imported ...' message: imports of every kind must not
#    change what the job sees.
# ---------------------------------------------------------------------------

case(
    "imports_by_hand_lazy_and_late",
    "imports of every kind the new per-template import message must cope with without changing the job: "
    "importlib.import_module and __import__ of submodules of packages the template imported, failed imports, modules put "
    "in sys.modules by hand (a ModuleType, None as a blocker, an int, an optional-dependency placeholder whose every "
    "attribute raises ImportError), a re-import after deleting a module, imports in a thread and in an atexit handler "
    "(which logs). Job 2 registers a LazyLoader module whose body raises ImportError (an optional backend that is not "
    "installed) and never touches it: a fresh job succeeds.",
    build="""    import email
    import xml.dom

    return {"calls": 0}""",
    script=r"""
import atexit, importlib, importlib.util, os, sys, threading, types

os.environ["RT25E_IMPORT_LOG"] = LOG
with open(LOG, "w") as f:
    f.write(f"job {k}\n")
res = []
if k == 1:
    res.append(importlib.import_module("email.mime.text").__name__)
    res.append(__import__("xml.dom.minidom", fromlist=["parseString"]).__name__)
    import email.mime.multipart
    res.append(email.mime.multipart.__name__)
    for stmt in ("import rt25e_no_such_module", "import email.rt25e_missing", "from json import rt25e_missing_name"):
        try:
            exec(stmt, {})
        except ImportError as e:
            res.append(f"{type(e).__name__}: {e}")
    sys.modules["rt25e_fake"] = types.ModuleType("rt25e_fake")
    import rt25e_fake
    res.append(rt25e_fake.__name__)
    sys.modules["rt25e_blocked"] = None
    try:
        import rt25e_blocked
    except ImportError as e:
        res.append(f"{type(e).__name__}: {e}")
    sys.modules["rt25e_int"] = 42
    import rt25e_int
    res.append(repr(rt25e_int))

    class Missing:
        def __getattr__(self, name):
            raise ImportError(f"rt25e_optional is not installed (asked for {name})")

    sys.modules["rt25e_optional"] = Missing()
    del sys.modules["email.mime.text"]
    res.append(importlib.import_module("email.mime.text").__name__)
    t = threading.Thread(target=lambda: res.append(str(importlib.import_module("statistics").mean([1, 2, 3]))))
    t.start()
    t.join()

    def late():
        import fractions
        import rt25e_late
        with open(LOG, "a") as f:
            f.write(f"atexit: {fractions.Fraction(1, 3)} {rt25e_late.VALUE}\n")

    atexit.register(late)
else:
    spec = importlib.util.find_spec("rt25e_lazy_opt")
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules["rt25e_lazy_opt"] = mod
    loader.exec_module(mod)
    res.append("lazy module registered, never used")
with open(OUT, "w") as f:
    f.write("\n".join(res) + "\n")
""",
    n=2,
    files={
        "scripts/rt25e_late.py": (
            "import os\n"
            "\n"
            'with open(os.environ["RT25E_IMPORT_LOG"], "a") as f:\n'
            '    f.write("rt25e_late imported\\n")\n'
            "VALUE = 7\n"
            "\n"
            "\n"
            'def _own_exit(_path=os.environ["RT25E_IMPORT_LOG"]):\n'
            '    with open(_path, "a") as f:\n'
            '        f.write("rt25e_late\'s own atexit handler (registered while atexit ran: never in a fresh run)\\n")\n'
            "\n"
            "\n"
            "import atexit  # noqa: E402\n"
            "\n"
            "atexit.register(_own_exit)\n"
        ),
        "scripts/rt25e_lazy_opt.py": 'raise ImportError("rt25e_lazy_opt: its optional backend is not installed")\n',
    },
)

case(
    "import_error_tracebacks",
    "tracebacks of failing imports, as a job prints them (from the script's frame down): an import statement, "
    "importlib.import_module, __import__, a circular import, a missing submodule, and the same import in a thread and in "
    "an atexit handler. A Python-level import watch (a wrapped __import__, loader or import_module) adds frames to these "
    "tracebacks that a fresh run does not have.",
    script=r"""
import atexit, importlib, os, threading, traceback


def frames(exc):
    out = []
    for fr in traceback.extract_tb(exc.__traceback__):
        fn = fr.filename
        if "/.snakemake/scripts/" in fn:
            fn = "<the job's script>"
        out.append(f"    {fn}:{fr.lineno} in {fr.name}")
    return out


def attempt(label, fn):
    try:
        fn()
    except BaseException as e:
        return [f"{label}: {type(e).__name__}: {e}"] + frames(e)
    return [f"{label}: no error"]


def imp_statement():
    import rt25e_bad1


def imp_module():
    importlib.import_module("rt25e_bad1")


def imp_dunder():
    __import__("rt25e_bad1")


def imp_circular():
    import rt25e_circ_a


def imp_missing_sub():
    import email.rt25e_missing


lines = []
for label, fn in (("statement", imp_statement), ("import_module", imp_module), ("__import__", imp_dunder), ("circular", imp_circular), ("missing submodule", imp_missing_sub)):
    lines += attempt(label, fn)
box = []
t = threading.Thread(target=lambda: box.extend(attempt("in a thread", imp_statement)))
t.start()
t.join()
lines += box
with open(OUT, "w") as f:
    f.write("\n".join(lines) + "\n")


def at_exit():
    with open(LOG, "w") as f:
        f.write("\n".join(attempt("in an atexit handler", imp_statement)) + "\n")


atexit.register(at_exit)
""",
    files={
        "scripts/rt25e_bad1.py": '"""A helper whose import fails."""\nSETTING = 1\nraise ValueError("rt25e_bad1: bad configuration")\n',
        "scripts/rt25e_circ_a.py": "import rt25e_circ_b  # noqa: F401\n\nX = 1\n",
        "scripts/rt25e_circ_b.py": "from rt25e_circ_a import X  # noqa: F401\n",
    },
)

case(
    "audit_hook_sees_only_the_job",
    "a job that adds an audit hook (sys.addaudithook, e.g. to record what it opens, runs and connects to) and writes the "
    "selected events to its log as they happen. In a fresh process the hook sees the job's own actions and nothing after "
    "the script's exit steps but the interpreter's own. A forked job's end (reading /proc/self/pagemap, gc.get_objects, "
    "killing the process group, ctypes calls, removing the temporary script) would show up in the job's log.",
    script=r"""
import os, re, subprocess, sys

_FD = os.open(LOG, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o644)
PREFIXES = ("os.", "socket.", "gc.", "ctypes.", "subprocess.", "signal.", "resource.", "shutil.", "tempfile.", "mmap.", "sys._current_frames", "sys.setprofile", "sys.settrace", "fcntl.", "msvcrt.")
EXACT = frozenset({"open"})
_busy = [False]


def hook(event, args, _w=os.write, _fd=_FD, _p=PREFIXES, _e=EXACT, _busy=_busy, _sub=re.sub, _repr=repr):
    if _busy[0] or not (event in _e or event.startswith(_p)):
        return
    _busy[0] = True
    try:
        if event.startswith("ctypes."):
            text = event
        else:
            text = event + " " + _repr(args)[:200]
        text = _sub(r"tmp\w+", "TMP", _sub(r"0x[0-9a-f]+|\d+", "N", text))
        _w(_fd, (text + "\n").encode())
    finally:
        _busy[0] = False


sys.addaudithook(hook)
with open(OUT, "w") as f:
    f.write(f"job {k}\n")
if k == 2:
    subprocess.run(["true"], check=True)
""",
    n=2,
    build='    return {"calls": 0, "own_worker": "audit_hook_sees_only_the_job"}',
)

case(
    "process_state_spy",
    "process-wide state a fresh `python script.py` under Snakemake starts with, as one job sees it: __main__'s dunder "
    "globals, the import machinery (builtins.__import__, meta_path, path_hooks), trace/profile and except hooks, warnings "
    "filters, sys.flags and limits, gc settings, faulthandler, tracemalloc, signal handlers, rlimits, niceness, the "
    "multiprocessing start method and process names, the root logger, stdio settings, locale, sys.path and selected "
    "environment variable names.",
    script=r"""
import builtins, faulthandler, gc, locale, logging, os, re, resource, signal, socket, sys, threading, time, tracemalloc, warnings
import multiprocessing as mp

lines = []


def clean(v):
    return re.sub(r"tmp[a-z0-9_]{6,}", "TMP", re.sub(r" at 0x[0-9a-f]+", "", str(v)))


def add(name, value):
    lines.append(f"{name}: {clean(value)}")


g = globals()
add("dunder globals", sorted(n for n in g if n.startswith("__") and n.endswith("__")))
add("__name__/__package__/__spec__", (__name__, __package__, __spec__))
add("__loader__", type(g.get("__loader__")).__name__)
add("__builtins__", type(g["__builtins__"]).__name__)
add("__main__ dict is the script's", sys.modules["__main__"].__dict__ is g)
add("builtins.__import__", (type(builtins.__import__).__name__, getattr(builtins.__import__, "__module__", None)))
add("meta_path", [f.__name__ if isinstance(f, type) else type(f).__name__ for f in sys.meta_path])
add("path_hooks", [getattr(h, "__qualname__", type(h).__name__) for h in sys.path_hooks])
add("trace/profile", (sys.gettrace(), sys.getprofile(), threading.gettrace(), threading.getprofile()))
add("default hooks", [sys.excepthook is sys.__excepthook__, sys.displayhook is sys.__displayhook__, sys.unraisablehook is sys.__unraisablehook__, sys.breakpointhook is sys.__breakpointhook__, threading.excepthook is threading.__excepthook__])
add("warnings.filters", warnings.filters)
add("warnoptions", sys.warnoptions)
add("flags", sys.flags)
add("limits", (sys.getrecursionlimit(), sys.getswitchinterval(), sys.get_int_max_str_digits(), sys.getdlopenflags()))
add("gc", (gc.isenabled(), gc.get_threshold(), gc.get_debug()))
add("faulthandler/tracemalloc", (faulthandler.is_enabled(), tracemalloc.is_tracing()))


def handler_name(h):
    if h is None:
        return "None"
    if isinstance(h, signal.Handlers):
        return h.name
    return getattr(h, "__qualname__", type(h).__name__)


add("signals", {getattr(s, "name", str(s)): handler_name(signal.getsignal(s)) for s in sorted(signal.valid_signals()) if int(s) < 32})
add("rlimits", {n: resource.getrlimit(getattr(resource, n)) for n in ("RLIMIT_NOFILE", "RLIMIT_CORE", "RLIMIT_STACK", "RLIMIT_AS", "RLIMIT_NPROC", "RLIMIT_FSIZE")})
add("nice", os.getpriority(os.PRIO_PROCESS, 0))
add("cpus", len(os.sched_getaffinity(0)) == os.cpu_count())
old = os.umask(0o022)
os.umask(old)
add("umask", oct(old))
add("multiprocessing", (mp.get_start_method(allow_none=True), mp.current_process().name, mp.parent_process()))
root = logging.getLogger()
add("root logger", (root.level, [type(h).__name__ for h in root.handlers], logging.lastResort is not None, logging.raiseExceptions, logging.getLoggerClass().__name__, logging.getLogRecordFactory() is logging.LogRecord, logging.root.manager.disable))
add("stdio", [(s.encoding, s.errors, getattr(s, "line_buffering", None)) for s in (sys.stdout, sys.stderr)])
add("stdio are the originals", [sys.stdout is sys.__stdout__, sys.stderr is sys.__stderr__])
add("encodings", (sys.getfilesystemencoding(), locale.getpreferredencoding(False), locale.setlocale(locale.LC_ALL)))
add("tz", (time.tzname, time.timezone))
add("socket timeout", socket.getdefaulttimeout())
add("sys.path", sys.path)
add("env names", sorted(n for n in os.environ if re.search(r"STICKY|SNAKEMAKE|PYTHON|TOKENIZERS|_NUM_THREADS|MALLOC|LD_PRELOAD|OMP_|DISTEA", n)))
with open(OUT, "w") as f:
    f.write("\n".join(lines) + "\n")
""",
)

# ---------------------------------------------------------------------------
# 3. A template whose memory goes into huge pages after many forks.
# ---------------------------------------------------------------------------

case(
    "hugepage_template_after_128_forks",
    "140 tiny jobs on one template holding 8 MiB of heap (a bytearray), a 4 MiB private anonymous mmap, a private "
    "mapping of a 2 MiB file, a 2 MiB shared anonymous mmap and a 100,000-int list, plus a daemon server process (its "
    "child) that writes into the shared mmap on request. After the worker's 128th fork its memory goes into huge pages: "
    "every job must still read exactly the template's bytes (digests as built), its own writes (one byte per 4 KiB page "
    "everywhere) must stay its own, and the shared mmap must stay shared with the template's server.",
    build="""    import hashlib
    import mmap
    import multiprocessing as mp
    import os
    import tempfile

    MiB = 1 << 20
    pattern = bytes(range(256)) * 4096  # 1 MiB
    big = bytearray(pattern * 8)
    priv = mmap.mmap(-1, 4 * MiB, flags=mmap.MAP_PRIVATE)
    priv.write(pattern * 4)
    shared = mmap.mmap(-1, 2 * MiB)
    shared.write(pattern[::-1] * 2)
    fd, path = tempfile.mkstemp(prefix="rt25e-blob-")
    os.write(fd, bytes(reversed(range(256))) * 8192)
    filemap = mmap.mmap(fd, 2 * MiB, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE)
    os.close(fd)
    os.unlink(path)
    ints = list(range(100_000))
    ctx = mp.get_context("fork")
    a, b = ctx.Pipe()

    def serve(conn, region):
        while True:
            try:
                req = conn.recv()
            except EOFError:
                return
            region[0:16] = (req * 3).to_bytes(16, "little")
            conn.send(("written", req))

    server = ctx.Process(target=serve, args=(b, shared), daemon=True)
    server.start()
    b.close()
    digests = {
        "big": hashlib.sha256(big).hexdigest(),
        "priv": hashlib.sha256(priv).hexdigest(),
        "shared": hashlib.sha256(shared[4096:]).hexdigest(),
        "filemap": hashlib.sha256(filemap).hexdigest(),
    }
    return {"calls": 0, "big": big, "priv": priv, "shared": shared, "filemap": filemap, "ints": ints, "intsum": sum(ints), "conn": a, "digests": digests}""",
    script=r"""
import hashlib


def dig(buf):
    return hashlib.sha256(buf).hexdigest()


lines = [f"job {k}", f"calls before {st['calls']}"]
st["calls"] += 1
now = {"big": dig(st["big"]), "priv": dig(st["priv"]), "shared": dig(st["shared"][4096:]), "filemap": dig(st["filemap"])}
for name in sorted(now):
    lines.append(f"{name} {'as built' if now[name] == st['digests'][name] else 'CHANGED'} {now[name][:16]}")
lines.append(f"ints {'as built' if sum(st['ints']) == st['intsum'] else 'CHANGED'}")
for name in ("big", "priv", "filemap"):
    buf = st[name]
    for off in range(k % 4096, len(buf), 4096):
        buf[off] = (buf[off] + 1) & 0xFF
    lines.append(f"{name} after the job's writes {dig(buf)[:16]}")
st["ints"][::1000] = [-k] * len(st["ints"][::1000])
lines.append(f"ints after the job's writes {sum(st['ints'])}")
try:
    st["conn"].send(k)
    reply = st["conn"].recv() if st["conn"].poll(20) else "no reply in 20 s"
except Exception as e:
    reply = f"{type(e).__name__}"
lines.append(f"server {reply}, shared slot {int.from_bytes(st['shared'][0:16], 'little')}")
with open(OUT, "w") as f:
    f.write("\n".join(lines) + "\n")
""",
    n=140,
)
