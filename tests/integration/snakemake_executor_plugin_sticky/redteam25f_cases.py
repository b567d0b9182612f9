"""The sixth sticky red team's cases (issue 25, 2026-12-05, later): written from docs/sticky.md
and README.md only, aimed at a forked job's teardown as the interpreter's ``finalize_modules``
(what ``__del__`` methods can still use, in which order, which objects are finalised at all),
default names, audit hooks and profilers at exit. 34 cases; on the first pass (against the
teardown of 5069a72) 22 differed in fork mode and 25 in direct mode."""

# ruff: noqa: E501
import functools

from redteam_cases import HEADER, add_case  # noqa: F401

CASES = {}
case = functools.partial(add_case, CASES)

# A probe helper: records without needing builtins (os functions bound as defaults).
PROBE = r'''
import os, sys, builtins

def make_rec(path, _o=os.open, _w=os.write, _fl=os.O_WRONLY | os.O_CREAT | os.O_APPEND):
    fd = _o(path, _fl, 0o644)
    def rec(msg):
        _w(fd, (msg + "\n").encode())
    return rec

def describe(_bd=builtins.__dict__, _sd=sys.__dict__, _isf=sys.is_finalizing):
    out = []
    for n in ("open", "print", "len", "__import__"):
        if n not in _bd:
            out.append(n + ":missing")
        elif _bd[n] is None:
            out.append(n + ":None")
        else:
            out.append(n + ":ok")
    for n in ("path", "meta_path", "argv", "path_hooks", "excepthook"):
        v = _sd.get(n, 0)
        out.append(n + (":None" if v is None else ":set"))
    so = _sd.get("stdout")
    out.append("stdout:" + ("orig" if so is _sd.get("__stdout__") else "other"))
    return " ".join(out)

class H:
    """A helper-module class whose __del__ records the interpreter's state."""
    def __init__(self, rec, name):
        self.rec = rec
        self.name = name
    def __del__(self):
        self.rec("H.del " + self.name + " | " + describe())
'''

F = {"scripts/probe.py": PROBE}

# ---------------------------------------------------------------- __del__ at exit
case(
    "del_main_cycle_state",
    "__main__ defines a class (its globals are in a cycle); __del__ of its globals record builtins/sys/import state at exit",
    r"""
import json, probe
rec = probe.make_rec(LOG)
class D:
    def __init__(self, name):
        self.name = name
    def __del__(self):
        rec("D.del " + self.name + " | " + probe.describe())
a = D("a")
b = D("b")
with open(OUT, "w") as f:
    f.write(json.dumps({"k": k}) + "\n")
""",
    n=2,
    files=F,
)

case(
    "del_main_nocycle_state",
    "__main__ defines no function or class (its dict dies by refcount at module removal); helper objects' __del__ record state",
    r"""
import json, probe
rec = probe.make_rec(LOG)
a = probe.H(rec, "a")
_b = probe.H(rec, "_b")
c = probe.H(rec, "c")
holder = [probe.H(rec, "in_list_1"), probe.H(rec, "in_list_2")]
with open(OUT, "w") as f:
    f.write(json.dumps({"k": k}) + "\n")
""",
    n=2,
    files=F,
)

case(
    "del_lazy_import_rmtree",
    "a scratch-dir class whose __del__ lazily imports shutil to remove its dir (a fresh exit fails the import: dir stays)",
    r"""
import os
class Scratch:
    def __init__(self, path):
        self.path = path
        os.makedirs(path, exist_ok=True)
        with open(os.path.join(path, "data.txt"), "w") as f:
            f.write("scratch %d\n" % k)
    def __del__(self):
        import shutil
        shutil.rmtree(self.path)
sc = Scratch(os.path.join(os.path.dirname(OUT), "scratch%d" % k))
with open(OUT, "w") as f:
    f.write("prev scratch dirs: %s\n" % sorted(d for d in os.listdir(os.path.dirname(OUT)) if d.startswith("scratch") and d != "scratch%d" % k))
""",
    n=3,
)

case(
    "del_lazy_import_nocycle",
    "same lazy-import __del__ but defined in a helper module and __main__ defines nothing (refcount death at module removal)",
    r"""
import os, scratchmod
sc = scratchmod.Scratch(os.path.join(os.path.dirname(OUT), "nscratch%d" % k), k)
with open(OUT, "w") as f:
    f.write("prev: %s\n" % sorted(d for d in os.listdir(os.path.dirname(OUT)) if d.startswith("nscratch") and d != "nscratch%d" % k))
""",
    n=3,
    files={
        "scripts/scratchmod.py": r"""
import os
class Scratch:
    def __init__(self, path, k):
        self.path = path
        os.makedirs(path, exist_ok=True)
        with open(os.path.join(path, "data.txt"), "w") as f:
            f.write("scratch %d\n" % k)
    def __del__(self):
        import shutil
        shutil.rmtree(self.path)
"""
    },
)

case(
    "signal_handler_keeps_main",
    "a SIGTERM handler defined in the script (graceful shutdown idiom); object with __del__ and an open file at exit",
    r"""
import signal, probe
rec = probe.make_rec(OUT + ".rec")
def on_term(signum, frame):
    raise SystemExit(1)
signal.signal(signal.SIGTERM, on_term)
class D:
    def __del__(self):
        rec("D.del | " + probe.describe())
d = D()
side = open(OUT + ".side", "w")
side.write("left open %d\n" % k)
with open(OUT, "w") as f:
    f.write("ok\n")
""",
    n=2,
    files=F,
)

case(
    "audit_hook_exit_events",
    "a job's own audit hook records event names after the script's last line (exit steps), and an object with __del__",
    r"""
import sys, probe
rec = probe.make_rec(LOG)
done = [False]
def hook(event, args):
    if done[0] and not event.startswith("cpython.run_"):
        rec("audit " + event)
sys.addaudithook(hook)
class D:
    def __del__(self):
        rec("D.del")
d = D()
with open(OUT, "w") as f:
    f.write("ok %d\n" % k)
done[0] = True
""",
    n=2,
    files=F,
)

case(
    "setprofile_exit_calls",
    "a profiler set by the script (sys.setprofile) records the Python functions called after the script's last line",
    r"""
import sys, os, probe
rec = probe.make_rec(LOG)
done = [False]
def prof(frame, event, arg):
    if done[0] and event == "call":
        co = frame.f_code
        rec("call %s %s" % (co.co_name, os.path.basename(co.co_filename)))
with open(OUT, "w") as f:
    f.write("ok %d\n" % k)
sys.setprofile(prof)
done[0] = True
""",
    n=2,
    files=F,
)

case(
    "weakref_finalize_atexit_flags",
    "weakref.finalize with atexit=True/False on module globals, atexit handlers, __del__: which run and in what order",
    r"""
import atexit, weakref, probe
rec = probe.make_rec(LOG)
class Obj:
    def __init__(self, name):
        self.name = name
    def __del__(self):
        rec("Obj.del " + self.name)
a = Obj("a")
b = Obj("b")
c = Obj("c")
fa = weakref.finalize(a, rec, "finalize a (atexit)")
fb = weakref.finalize(b, rec, "finalize b (no atexit)")
fb.atexit = False
fc = weakref.finalize(c, rec, "finalize c (atexit)")
atexit.register(rec, "atexit 1")
def late():
    rec("atexit 2, a alive: %s" % fa.alive)
atexit.register(late)
with open(OUT, "w") as f:
    f.write("ok %d\n" % k)
""",
    n=2,
    files=F,
)

case(
    "generator_finally_at_exit",
    "an unexhausted generator and an entered-but-never-exited @contextmanager in globals: their finally blocks at exit (open? sys?)",
    r"""
import contextlib, probe
rec = probe.make_rec(LOG)
def gen():
    try:
        yield 1
        yield 2
    finally:
        rec("gen finally | " + probe.describe())
        try:
            with open(OUT + ".gen", "w") as f:
                f.write("gen closed\n")
        except Exception as e:
            rec("gen open failed " + type(e).__name__)
g = gen()
next(g)
@contextlib.contextmanager
def session():
    rec("session enter")
    try:
        yield "s"
    finally:
        rec("session finally")
cm = session()
s = cm.__enter__()
with open(OUT, "w") as f:
    f.write("ok %d\n" % k)
""",
    n=2,
    files=F,
)

case(
    "archives_left_open_main",
    "gzip, zipfile, bz2, lzma and a csv writer left open in __main__'s globals (script defines a function): archive bytes at exit",
    r"""
import gzip, zipfile, csv, bz2, lzma, os
d = os.path.dirname(OUT)
def helper():
    return k
gz = gzip.GzipFile(os.path.join(d, "a%d.gz" % k), "wb", mtime=0)
gz.write(b"hello gzip\n" * 50)
zf = zipfile.ZipFile(os.path.join(d, "a%d.zip" % k), "w")
zi = zipfile.ZipInfo("inner.txt", date_time=(2020, 1, 1, 0, 0, 0))
zf.writestr(zi, "zip data %d\n" % k)
bz = bz2.BZ2File(os.path.join(d, "a%d.bz2" % k), "wb")
bz.write(b"bz2 data\n" * 20)
xz = lzma.LZMAFile(os.path.join(d, "a%d.xz" % k), "wb")
xz.write(b"xz data\n" * 20)
cf = open(os.path.join(d, "a%d.csv" % k), "w", newline="")
w = csv.writer(cf)
w.writerow(["k", k])
with open(OUT, "w") as f:
    f.write("ok\n")
""",
    n=2,
)

case(
    "tempfiles_left",
    "NamedTemporaryFile, TemporaryDirectory, mkdtemp and SpooledTemporaryFile left in globals (main and helper); the next job lists what remains",
    r"""
import os, tempfile, tmpmod
d = os.path.join(os.path.dirname(OUT), "tmpd")
os.makedirs(d, exist_ok=True)
before = sorted(x.split("_")[0] for x in os.listdir(d))
ntf = tempfile.NamedTemporaryFile(dir=d, prefix="main-ntf%d_" % k)
ntf.write(b"x")
tdir = tempfile.TemporaryDirectory(dir=d, prefix="main-tdir%d_" % k)
spool = tempfile.SpooledTemporaryFile(max_size=10, dir=d)
spool.write(b"0123456789abcdef")
tmpmod.keep(d, k)
with open(OUT, "w") as f:
    f.write("before: %s\n" % before)
""",
    n=3,
    files={
        "scripts/tmpmod.py": r"""
import tempfile
CACHE = {}
def keep(d, k):
    CACHE["ntf"] = tempfile.NamedTemporaryFile(dir=d, prefix="helper-ntf%d_" % k)
    CACHE["tdir"] = tempfile.TemporaryDirectory(dir=d, prefix="helper-tdir%d_" % k)
"""
    },
)

case(
    "daemon_thread_holders",
    "files held by a blocked daemon thread (in its frame, in a global it also holds, in a finished daemon thread)",
    r"""
import os, threading
d = os.path.dirname(OUT)
ev = threading.Event()
started = threading.Barrier(3)
def hold_local(path):
    f = open(path, "w")
    f.write("held by daemon frame\n")
    started.wait()
    ev.wait()
g = open(os.path.join(d, "dglobal%d.txt" % k), "w")
g.write("global also held by daemon\n")
def hold_global(fh):
    started.wait()
    ev.wait()
t1 = threading.Thread(target=hold_local, args=(os.path.join(d, "dlocal%d.txt" % k),), daemon=True)
t2 = threading.Thread(target=hold_global, args=(g,), daemon=True)
t1.start(); t2.start()
started.wait()
done_f = open(os.path.join(d, "dfinished%d.txt" % k), "w")
def finished(fh):
    fh.write("written by a finished daemon\n")
t3 = threading.Thread(target=finished, args=(done_f,), daemon=True)
t3.start(); t3.join()
with open(OUT, "w") as f:
    f.write("ok\n")
""",
    n=2,
)

case(
    "thread_names_logging",
    "default thread names in logging %(threadName)s: Thread, Thread subclass, Timer, ThreadPoolExecutor x3, ThreadPool, QueueListener",
    r"""
import threading, logging, logging.handlers, queue, concurrent.futures as cf
import multiprocessing.pool
logging.basicConfig(filename=LOG, level=logging.INFO, format="%(threadName)s|%(processName)s|%(message)s")
def work(i):
    logging.info("work %d", i)
    return threading.current_thread().name
names = []
t = threading.Thread(target=work, args=(1,)); t.start(); t.join(); names.append(t.name)
class T(threading.Thread):
    def run(self):
        logging.info("subclass run")
t2 = T(); t2.start(); t2.join(); names.append(t2.name)
tm = threading.Timer(0.01, work, args=(2,)); tm.start(); tm.join(); names.append(tm.name)
with cf.ThreadPoolExecutor(max_workers=1) as ex:
    names.append(ex.submit(work, 3).result())
with cf.ThreadPoolExecutor(max_workers=1) as ex:
    names.append(ex.submit(work, 4).result())
with cf.ThreadPoolExecutor(max_workers=1, thread_name_prefix="pfx") as ex:
    names.append(ex.submit(work, 5).result())
tp = multiprocessing.pool.ThreadPool(1)
names.append(tp.apply(work, (6,)))
tp.close(); tp.join()
q = queue.Queue()
ql = logging.handlers.QueueListener(q, logging.getLogger().handlers[0])
ql.start(); names.append(ql._thread.name); ql.stop()
names.append(threading.main_thread().name)
names.append(threading.current_thread().name)
with open(OUT, "w") as f:
    f.write("\n".join(names) + "\n")
""",
    n=2,
)

case(
    "thread_names_template_threads",
    "the template's build starts and joins threads, an executor and a process; the job's default names continue the counts",
    r"""
import threading, concurrent.futures as cf, multiprocessing as mp
names = []
t = threading.Thread(target=int); t.start(); t.join(); names.append(t.name)
with cf.ThreadPoolExecutor(1) as ex:
    ex.submit(int).result()
    names.append(list(ex._threads)[0].name)
p = mp.Process(target=int); p.start(); p.join(); names.append(p.name)
with open(OUT, "w") as f:
    f.write("\n".join(names) + "\n")
""",
    build="""\
    import threading, concurrent.futures as cf, multiprocessing as mp
    t = threading.Thread(target=int); t.start(); t.join()
    t = threading.Thread(target=int, name="named"); t.start(); t.join()
    with cf.ThreadPoolExecutor(1) as ex:
        ex.submit(int).result()
    p = mp.Process(target=int); p.start(); p.join()
    return {"calls": 0}
""",
    n=2,
)

case(
    "process_names",
    "multiprocessing names: Process, Pool workers, ProcessPoolExecutor processes and its manager thread, child's current_process",
    r"""
import multiprocessing as mp, concurrent.futures as cf, threading
import procmod
out = []
q = mp.Queue()
p = mp.Process(target=procmod.report, args=(q,)); p.start(); out.append("child saw " + q.get()); p.join()
out.append(p.name)
pool = mp.Pool(2)
out.append(",".join(w.name for w in pool._pool))
pool.close(); pool.join()
with cf.ProcessPoolExecutor(max_workers=1) as ex:
    ex.submit(int).result()
    out.append(",".join(sorted(pr.name for pr in ex._processes.values())))
    out.append(ex._executor_manager_thread.name)
out.append(mp.current_process().name + " parent=" + str(mp.parent_process()) + " ident=" + str(mp.current_process()._identity))
out.append("threads=" + ",".join(sorted(t.name for t in threading.enumerate())))
with open(OUT, "w") as f:
    f.write("\n".join(out) + "\n")
""",
    n=2,
    files={
        "scripts/procmod.py": r"""
import multiprocessing as mp
def report(q):
    cp = mp.current_process()
    q.put("%s ident=%s parent=%s" % (cp.name, cp._identity, mp.parent_process().name))
"""
    },
)

case(
    "lru_cache_weak_registry",
    "helper module: lru_cache holding objects with __del__, WeakValueDictionary with callbacks, a module-level registry list",
    r"""
import cachemod, probe
rec = probe.make_rec(LOG)
cachemod.REC = rec
for i in range(3):
    cachemod.load(i)
keep = cachemod.make_weak("w1")
with open(OUT, "w") as f:
    f.write("ok %d %s\n" % (k, cachemod.load.cache_info().currsize))
""",
    n=2,
    files={
        "scripts/probe.py": PROBE,
        "scripts/cachemod.py": r"""
import functools, weakref
REC = None
class Item:
    def __init__(self, i, rec):
        self.i = i
        self.rec = rec
    def __del__(self):
        self.rec("Item.del %s REC=%s" % (self.i, "None" if REC is None else "set"))
@functools.lru_cache(maxsize=None)
def load(i):
    return Item(i, REC)
WEAK = weakref.WeakValueDictionary()
REGISTRY = []
def make_weak(name):
    it = Item(name, REC)
    WEAK[name] = it
    weakref.finalize(it, REC, "weak finalize " + name)
    REGISTRY.append(Item("reg-" + name, REC))
    return it
""",
    },
)

case(
    "package_circular_importlib",
    "a workflow package with circular submodule imports loaded via importlib; objects with __del__ in each using the other module",
    r"""
import importlib, probe
rec = probe.make_rec(LOG)
a = importlib.import_module("pkg.a")
a.start(rec)
with open(OUT, "w") as f:
    f.write("ok %d %s\n" % (k, a.info()))
""",
    n=2,
    files={
        "scripts/probe.py": PROBE,
        "scripts/pkg/__init__.py": "from . import a\n",
        "scripts/pkg/a.py": r"""
from . import b
class A:
    def __init__(self, rec):
        self.rec = rec
    def __del__(self):
        self.rec("A.del b.LABEL=%s b.B_OBJ=%s" % (getattr(b, "LABEL", "gone"), "None" if getattr(b, "B_OBJ", None) is None else "set"))
A_OBJ = None
LABEL = "label-a"
def start(rec):
    global A_OBJ
    A_OBJ = A(rec)
    b.start(rec)
def info():
    return b.LABEL
""",
        "scripts/pkg/b.py": r"""
from . import a
class B:
    def __init__(self, rec):
        self.rec = rec
    def __del__(self):
        self.rec("B.del a.LABEL=%s a.A_OBJ=%s" % (getattr(a, "LABEL", "gone"), "None" if getattr(a, "A_OBJ", None) is None else "set"))
B_OBJ = None
LABEL = "label-b"
def start(rec):
    global B_OBJ
    B_OBJ = B(rec)
""",
    },
)

case(
    "helper_imports_main",
    "a helper module does `import __main__` (keeps the main module object) and holds an object with __del__",
    r"""
import probe, mainref
rec = probe.make_rec(LOG)
mainref.hold(rec)
x = probe.H(rec, "main-x")
side = open(OUT + ".side", "w")
side.write("left open %d\n" % k)
with open(OUT, "w") as f:
    f.write("ok %d\n" % k)
""",
    n=2,
    files={
        "scripts/probe.py": PROBE,
        "scripts/mainref.py": r"""
import __main__, probe
HELD = None
def hold(rec):
    global HELD
    HELD = probe.H(rec, "mainref-held")
""",
    },
)

case(
    "warn_in_del_stderr_fd",
    "the script points fd 2 at a file; a __del__ warns at exit (a fresh exit shows it without the warnings module)",
    r"""
import os, sys, warnings
fd = os.open(OUT + ".err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.dup2(fd, 2)
class D:
    def __del__(self):
        warnings.warn("closing at exit")
d = D()
with open(OUT, "w") as f:
    f.write("ok %d\n" % k)
""",
    n=2,
)

# ---------------------------------------------------------------- template interplay
case(
    "job_attaches_to_state",
    "the job stores its own open file and an object with __del__ in the template's state dict; fresh tears the state down at exit",
    r"""
import probe
rec = probe.make_rec(LOG)
st["fh"] = open(OUT + ".side", "w")
st["fh"].write("job %d\n" % k)
st.setdefault("objs", []).append(probe.H(rec, "in-state-%d" % k))
with open(OUT, "w") as f:
    f.write("ok\n")
""",
    n=2,
    files=F,
)

case(
    "template_imported_workflow_module",
    "the template imports a workflow module holding a module-level object with __del__ that writes on close; the job uses it",
    r"""
import tmodule
tmodule.note("job %d" % k)
with open(OUT, "w") as f:
    f.write("ok %s\n" % tmodule.count())
""",
    build="""\
    import sys, os
    sys.path.insert(0, os.path.abspath("scripts"))
    import tmodule
    return {"calls": 0}
""",
    n=3,
    files={
        "scripts/tmodule.py": r"""
import os
class Journal:
    def __init__(self):
        self.lines = []
    def __del__(self):
        fd = os.open(os.path.join("out", "template_imported_workflow_module", "journal.txt"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        os.write(fd, ("journal: %s\n" % self.lines).encode())
        os.close(fd)
JOURNAL = Journal()
def note(s):
    JOURNAL.lines.append(s)
def count():
    return len(JOURNAL.lines)
"""
    },
)

case(
    "template_state_file_job_writes",
    "the template opens a file (truncating) and returns it; each job writes to it without flushing",
    r"""
st["fh"].write("job %d\n" % k)
with open(OUT, "w") as f:
    f.write("ok\n")
""",
    build="""\
    import os
    os.makedirs(os.path.join("out", "template_state_file_job_writes"), exist_ok=True)
    fh = open(os.path.join("out", "template_state_file_job_writes", "state_file.txt"), "w")
    fh.write("built\\n")
    return {"fh": fh}
""",
    n=2,
)

# ---------------------------------------------------------------- round 2
case(
    "exit_is_finalizing_guard",
    "the common library idiom: __del__ skips its cleanup when sys.is_finalizing() (a fresh exit is finalizing; atexit is not)",
    r"""
import sys, os, atexit
d = os.path.dirname(OUT)
class Cache:
    def __init__(self, path):
        self.path = path
    def __del__(self):
        if sys.is_finalizing():
            return
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.write(fd, b"cache flushed by __del__\n")
        os.close(fd)
cache = Cache(os.path.join(d, "cache%d.txt" % k))
atexit.register(lambda: open(os.path.join(d, "atexit%d.txt" % k), "w").write("finalizing in atexit: %s\n" % sys.is_finalizing()))
with open(OUT, "w") as f:
    f.write("ok\n")
""",
    n=2,
)

case(
    "dropped_cycle_del_imports_helper",
    "a garbage cycle left uncollected at the end; its __del__ imports a workflow helper whose import has a side effect",
    r"""
import gc, os, sidefx
gc.disable()
gc.collect()
class Node:
    def __init__(self):
        self.me = self
    def __del__(self):
        import sidefx
        sidefx.log("Node.__del__ ran, sidefx loads so far: %d" % sidefx.LOADS)
n = Node()
del n
with open(OUT, "w") as f:
    f.write("ok %d\n" % k)
gc.enable()
""",
    n=2,
    files={
        "scripts/sidefx.py": """
import os, sys
_p = os.path.join("logs", "dropped_cycle_del_imports_helper", "sidefx.txt")
LOADS = getattr(sys, "_sidefx_loads", 0) + 1
sys._sidefx_loads = LOADS
fd = os.open(_p, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
os.write(fd, b"sidefx module executed\\n")
os.close(fd)
def log(msg):
    f = os.open(_p, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.write(f, (msg + "\\n").encode())
    os.close(f)
"""
    },
)

case(
    "gc_callbacks_enabled_exit",
    "gc.callbacks registered by the script (a memory profiler); the collections it sees after the script's last line",
    r"""
import gc, probe
rec = probe.make_rec(LOG)
done = [False]
def cb(phase, info):
    if done[0]:
        rec("gc cb %s gen=%s" % (phase, info["generation"]))
gc.callbacks.append(cb)
with open(OUT, "w") as f:
    f.write("ok %d\n" % k)
done[0] = True
""",
    n=2,
    files=F,
)

case(
    "helper_global_del_uses_imports",
    "a helper module's module-level object (stats/connection) whose __del__ uses the module's imports and constants",
    r"""
import os, statsmod
statsmod.configure(os.path.join(os.path.dirname(OUT), "stats%d.json" % k))
statsmod.stats.add(k)
statsmod.stats.add(10)
with open(OUT, "w") as f:
    f.write("ok\n")
""",
    n=2,
    files={
        "scripts/statsmod.py": """
import os
import json
PATH = None
class Stats:
    def __init__(self):
        self.values = []
    def add(self, v):
        self.values.append(v)
    def __del__(self):
        try:
            fd = os.open(PATH, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.write(fd, json.dumps({"values": self.values}).encode() + b"\\n")
            os.close(fd)
        except Exception as e:
            fd = os.open(PATH + ".err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.write(fd, type(e).__name__.encode())
def configure(path):
    global PATH
    PATH = path
stats = Stats()
"""
    },
)

case(
    "stash_on_sys_and_builtins",
    "objects with __del__ stashed as attributes of sys and builtins (cross-module singletons); when and how they are finalised",
    r"""
import sys, builtins, probe
rec = probe.make_rec(LOG)
sys.my_singleton = probe.H(rec, "on-sys")
builtins.my_singleton = probe.H(rec, "on-builtins")
with open(OUT, "w") as f:
    f.write("ok %d\n" % k)
""",
    n=2,
    files=F,
)

case(
    "snakemake_object_holds_resource",
    "the script hangs a resource (object with __del__, an open file) on the snakemake object",
    r"""
import probe
rec = probe.make_rec(LOG)
snakemake.my_res = probe.H(rec, "on-snakemake")
snakemake.my_file = open(OUT + ".side", "w")
snakemake.my_file.write("left open on snakemake %d\n" % k)
with open(OUT, "w") as f:
    f.write("ok\n")
""",
    n=2,
    files=F,
)

case(
    "atexit_raises",
    "atexit handlers that raise SystemExit(3) and RuntimeError; a __del__ that calls sys.exit(4) at exit: the job's status",
    r"""
import atexit, sys
with open(OUT, "w") as f:
    f.write("ok %d\n" % k)
def bad_exit():
    raise SystemExit(3)
def bad_err():
    raise RuntimeError("atexit boom")
atexit.register(bad_exit)
atexit.register(bad_err)
class D:
    def __del__(self):
        sys.exit(4)
d = D()
""",
    n=2,
)

case(
    "daemon_progress_thread_open_output",
    "a daemon progress thread defined in the script (loops until exit) and the results file left open in a global",
    r"""
import threading, time
stop = threading.Event()
def progress():
    while not stop.wait(0.05):
        pass
threading.Thread(target=progress, daemon=True).start()
results = open(OUT + ".results", "w")
for i in range(3):
    results.write("row %d %d\n" % (k, i))
with open(OUT, "w") as f:
    f.write("ok\n")
""",
    n=2,
)

# ---------------------------------------------------------------- round 3
case(
    "importlib_file_module_del",
    "a config module loaded from a file path with spec_from_file_location/exec_module (not in sys.modules) holding an object with __del__",
    r"""
import importlib.util, os, probe
rec = probe.make_rec(LOG)
spec = importlib.util.spec_from_file_location("wfconfig", os.path.join("config", "wfconfig.py"))
cfg = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cfg)
cfg.start(rec)
with open(OUT, "w") as f:
    f.write("ok %d %s\n" % (k, cfg.NAME))
""",
    n=2,
    files={
        "scripts/probe.py": PROBE,
        "config/wfconfig.py": """
import os
NAME = "wfconfig"
HOLD = None
class Conn:
    def __init__(self, rec):
        self.rec = rec
    def __del__(self):
        self.rec("Conn.del NAME=%s os=%s" % (NAME, "None" if os is None else "set"))
def start(rec):
    global HOLD
    HOLD = Conn(rec)
""",
    },
)

case(
    "helper_in_added_path_del",
    "modules from a workflow lib/ folder the script adds to sys.path, and from the working directory, with module-level objects whose __del__ use their module",
    r"""
import sys, os, probe
rec = probe.make_rec(LOG)
sys.path.insert(0, os.path.abspath("lib"))
sys.path.insert(0, os.getcwd())
import libmod, rootmod
libmod.start(rec)
rootmod.start(rec)
with open(OUT, "w") as f:
    f.write("ok %d\n" % k)
""",
    n=2,
    files={
        "scripts/probe.py": PROBE,
        "lib/libmod.py": """
import os
TAG = "libmod"
OBJ = None
class R:
    def __init__(self, rec):
        self.rec = rec
    def __del__(self):
        self.rec("libmod R.del TAG=%s" % TAG)
def start(rec):
    global OBJ
    OBJ = R(rec)
""",
        "rootmod.py": """
import os
TAG = "rootmod"
OBJ = None
class R:
    def __init__(self, rec):
        self.rec = rec
    def __del__(self):
        self.rec("rootmod R.del TAG=%s" % TAG)
def start(rec):
    global OBJ
    OBJ = R(rec)
""",
    },
)

case(
    "logging_filter_class_keeps_main",
    "a logging.Filter subclass defined in the script attached to the root logger (a library keeps the script's class); __del__ of globals",
    r"""
import logging, probe
rec = probe.make_rec(OUT + ".rec")
logging.basicConfig(filename=LOG, level=logging.INFO, format="%(job)s %(message)s")
class AddJob(logging.Filter):
    def filter(self, record):
        record.job = "job%d" % k
        return True
logging.getLogger().handlers[0].addFilter(AddJob())
class Res:
    def __del__(self):
        rec("Res.del | " + probe.describe())
r = Res()
logging.info("hello")
with open(OUT, "w") as f:
    f.write("ok\n")
""",
    n=2,
    files=F,
)

case(
    "warnings_showwarning_keeps_main",
    "warnings.showwarning replaced by a function defined in the script (send warnings to the log); __del__ of globals",
    r"""
import warnings, probe
rec = probe.make_rec(OUT + ".rec")
def to_log(message, category, filename, lineno, file=None, line=None):
    rec("warning: %s: %s" % (category.__name__, message))
warnings.showwarning = to_log
class Res:
    def __del__(self):
        rec("Res.del | " + probe.describe())
r = Res()
warnings.warn("during the job")
with open(OUT, "w") as f:
    f.write("ok\n")
""",
    n=2,
    files=F,
)

# ---------------------------------------------------------------------------
# Added after the red team (not its case): the first red team's shared_memory_named failed
# once under load in fork mode (the job was reported done before the resource tracker it
# started had unlinked the block it leaked; the next job's create=True then failed). Eight
# chained jobs make the race all but certain without the fix.
# ---------------------------------------------------------------------------

case(
    "shm_leaked_block_chain",
    "each job creates the same named SharedMemory block and closes it without unlinking: the "
    "resource tracker the job started unlinks it when the job's process ends, before the next job",
    r"""
from multiprocessing import shared_memory

shm = shared_memory.SharedMemory(name="rt25f_shm_chain", create=True, size=64)
shm.buf[0] = k
with open(OUT, "w") as f:
    f.write(f"k={shm.buf[0]}\n")
shm.close()
""",
    n=8,
)
