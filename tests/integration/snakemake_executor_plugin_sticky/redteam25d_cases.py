"""The fourth sticky red team's cases (issue 25, 2026-12-04): a helper that saw only
docs/sticky.md and README.md wrote them, aimed at fork mode's pages populated ahead and the
other changes of that day; kept as written but one (see case 24). Run by test_redteam25d.py."""

# ruff: noqa: E501 - the helper's cases, kept as written

import functools

from redteam_cases import DEFAULT_BUILD, HEADER, add_case  # noqa: F401 - the same case format

CASES = {}
case = functools.partial(add_case, CASES)


# ---------------------------------------------------------------------------
# Red team 25d: fork mode's spare child that "touches the pages of the template the
# last invocations touched", the naming of libraries a forked job imports, and the
# "Warm up the template" guidance.  Builds are 4-space-indented function bodies;
# scripts are top-level code appended after HEADER.  Every output below is the same
# in every `--executor local` run (no PIDs, addresses, timings or absolute sizes).
# ---------------------------------------------------------------------------


def _s(text):
    return text.strip("\n") + "\n"


def _b(text):
    return text.strip("\n")


# 1 -------------------------------------------------------------------------
case(
    "pretouch_private_file_mapping_goes_stale",
    "docs/sticky.md, isolation: the spare child 'touches the pages of the template the last "
    "invocations touched ... a child's first write to a template page copies it ... it changes "
    "no memory contents'. The template maps a data file copy-on-write (mmap ACCESS_COPY = "
    "MAP_PRIVATE). Each job rewrites the file in place (pwrite, same inode, no truncate), then "
    "reads the mapping: in a fresh process an unwritten MAP_PRIVATE page is the page cache, so it "
    "shows the new bytes (local: mapping_page0=gen00k). The job then writes into its private copy, "
    "so the page is recorded as written; if the next spare child pre-faults it for writing "
    "(MADV_POPULATE_WRITE), the copy is made BEFORE the job's pwrite and the job sees the previous "
    "job's bytes (gen00k-1): stale data, although no memory content was 'changed'.",
    _s(r"""
import os
path = st["path"]
m = st["m"]
tag = ("gen%03d" % k).encode()
fd = os.open(path, os.O_WRONLY)
os.pwrite(fd, tag, 0)       # page 0, in place
os.pwrite(fd, tag, 4096)    # page 1, in place
os.close(fd)
seen0 = bytes(m[0:6]).decode()
seen1 = bytes(m[4096:4102]).decode()
m[100:103] = b"job"         # this job's own copy-on-write change (never reaches the file)
m[4196:4199] = b"job"
with open(OUT, "w") as o:
    o.write(f"k={k} wrote={tag.decode()} mapping_page0={seen0} mapping_page1={seen1}\n")
"""),
    build=_b(r"""
    import mmap, os
    f = open("data/cow.bin", "rb")
    m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
    return {"m": m, "f": f, "path": os.path.abspath("data/cow.bin")}
"""),
    n=4,
    files={"data/cow.bin": "a" * 8192},
)

# 2 -------------------------------------------------------------------------
case(
    "pretouch_numpy_memmap_copy_on_write_goes_stale",
    "docs/sticky.md, isolation: spare child pre-faults template pages the last invocations "
    "wrote ('changes no memory contents'). numpy.memmap(mode='c') is MAP_PRIVATE: pages the "
    "process has not written show the file's current bytes. Each job updates the file in place "
    "(open r+b, no truncate) and reads the 'c' memmap; under local it sees its own update "
    "(c_page0=BBBB for k=1, CCCC for k=2...). After a job writes into the 'c' memmap, a spare "
    "that pre-faults those pages for writing copies them early, so the next job reads the "
    "previous job's letters. The mode='r' memmap (MAP_SHARED) is the control: same either way.",
    _s(r"""
import numpy as np
letter = bytes([65 + k])
with open(st["path"], "r+b") as f:
    f.seek(0); f.write(letter * 16)
    f.seek(4096); f.write(letter * 16)
a, r = st["a"], st["r"]
line = (f"k={k} c_page0={bytes(a[:4]).decode()} c_page1={bytes(a[4096:4100]).decode()} "
        f"r_page0={bytes(r[:4]).decode()}\n")
a[8:12] = 1          # private (copy-on-write) change by this job
a[4104:4108] = 1
with open(OUT, "w") as o:
    o.write(line)
"""),
    build=_b(r"""
    import os
    import numpy as np
    a = np.memmap("data/arr.bin", dtype=np.uint8, mode="c")
    r = np.memmap("data/arr.bin", dtype=np.uint8, mode="r")
    return {"a": a, "r": r, "path": os.path.abspath("data/arr.bin")}
"""),
    n=4,
    files={"data/arr.bin": "0" * 8192},
)

# 3 -------------------------------------------------------------------------
case(
    "pretouch_pagemap_present_pages_of_template_mapping",
    "docs/sticky.md, isolation: 'each recording child lists its pages from /proc/self/pagemap "
    "once its job is done' and the spare 'touches the pages of the template the last invocations "
    "touched'. The template has a 64-page private anonymous mapping and writes page 0 only. Each "
    "job reads the pagemap present bits of that mapping at its start, then writes page k and reads "
    "page 20+k. Local: present_at_start=[0] in every job. If the spare child populates the pages "
    "earlier jobs touched (pages 1..k-1 and 21..19+k), they are already present at the start of "
    "job k (pages that did not even exist in the template), so the list differs.",
    _s(r"""
import ctypes, mmap, os, struct
PAGE = mmap.PAGESIZE
m = st["m"]
buf = (ctypes.c_char * len(m)).from_buffer(m)
addr = ctypes.addressof(buf)
del buf
def present():
    fd = os.open("/proc/self/pagemap", os.O_RDONLY)
    try:
        data = os.pread(fd, 8 * 64, (addr // PAGE) * 8)
    finally:
        os.close(fd)
    return [i for i, e in enumerate(struct.unpack("<64Q", data)) if (e >> 63) & 1]
before = present()
m[k * PAGE + 7] = 1              # write page k
_ = m[(20 + k) * PAGE + 7]       # read page 20+k
after = present()
with open(OUT, "w") as o:
    o.write(f"k={k} present_at_start={before} present_after={after}\n")
"""),
    build=_b(r"""
    import mmap
    PAGE = mmap.PAGESIZE
    m = mmap.mmap(-1, 64 * PAGE, flags=mmap.MAP_PRIVATE)
    m.madvise(getattr(mmap, "MADV_NOHUGEPAGE", 15))   # one base page per fault, in every run
    m[0] = 1                                           # the template writes page 0 only
    return {"m": m}
"""),
    n=4,
)

# 4 -------------------------------------------------------------------------
case(
    "pretouch_shared_file_mapping_updates_mtime",
    "docs/sticky.md, isolation: the spare child touches template pages the last invocations "
    "touched and 'changes no memory contents'. The template maps a file MAP_SHARED read-write. "
    "Each job writes one byte (same value) through it, msyncs, then sets the file's mtime to a "
    "fixed value; the next job checks the mtime is still that value. Local: True (a fresh mmap() "
    "does not change mtime). A write pre-fault of a shared file page (MADV_POPULATE_WRITE) calls "
    "the filesystem's page_mkwrite, which updates mtime (ext4/xfs/overlay), so the next job sees "
    "False: a visible side effect of the pre-touching on the filesystem.",
    _s(r"""
import os
FIXED = 10 ** 18       # ns
path = st["path"]
m = st["m"]
s = os.stat(path)
state = "n/a" if k == 1 else str(s.st_mtime_ns == FIXED)
m[10:11] = b"s"        # same byte: the file's contents do not change
m.flush()
os.utime(path, ns=(FIXED, FIXED))
with open(OUT, "w") as o:
    o.write(f"k={k} mtime_still_fixed_at_start={state} head={bytes(m[:4]).decode()}\n")
"""),
    build=_b(r"""
    import mmap, os
    f = open("data/shared.bin", "r+b")
    m = mmap.mmap(f.fileno(), 0)          # MAP_SHARED, read-write
    return {"m": m, "f": f, "path": os.path.abspath("data/shared.bin")}
"""),
    n=4,
    files={"data/shared.bin": "s" * 8192},
)

# 5 -------------------------------------------------------------------------
case(
    "pretouch_leaves_ctypes_errno",
    "docs/sticky.md, isolation: the spare child populates pages 'with madvise' while it waits "
    "and stops when the script arrives. If that madvise goes through ctypes with use_errno=True "
    "(some ranges fail with EFAULT/ENOMEM/EINVAL: pages past EOF, PROT_NONE guard pages, "
    "unmapped ranges), ctypes' private errno copy in the thread that then runs the script is left "
    "non-zero. A fresh interpreter's ctypes.get_errno() is 0 (local: ctypes_errno_at_start=0).",
    _s(r"""
import ctypes
e = ctypes.get_errno()
with open(OUT, "w") as o:
    o.write(f"k={k} ctypes_errno_at_start={e}\n")
"""),
    n=3,
)

# 6 -------------------------------------------------------------------------
case(
    "modules_present_at_script_start",
    "docs/sticky.md contract: a job shares 'only what a fresh job would also have after building "
    "the state itself: ... what the template build imported'. The pre-touching (ctypes/mmap/"
    "struct/resource for madvise and /proc/self/pagemap) and the naming of libraries a job "
    "imports (importlib.metadata, sysconfig, ...) are new worker-side code that may import "
    "modules the forked child inherits. Libraries branch on `name in sys.modules` (optional "
    "integrations), so the set a script sees must be local's. Prints which probe modules are "
    "already imported when the script starts (deterministic under local).",
    _s(r"""
import sys
PROBE = ["ctypes", "_ctypes", "ctypes.util", "mmap", "resource", "fcntl", "select", "selectors",
         "socket", "ssl", "hmac", "secrets", "multiprocessing", "multiprocessing.connection",
         "multiprocessing.util", "concurrent.futures", "queue", "struct", "array",
         "importlib.metadata", "importlib.resources", "sysconfig", "zipfile", "email",
         "csv", "tempfile", "shutil", "asyncio", "decimal", "fractions", "statistics",
         "numpy", "torch", "faulthandler", "tracemalloc", "gc"]
present = [name for name in PROBE if name in sys.modules]
with open(OUT, "w") as o:
    o.write(f"k={k} already_imported={present}\n")
"""),
    n=2,
)

# 7 -------------------------------------------------------------------------
case(
    "pretouch_truncated_file_under_template_mapping",
    "docs/sticky.md, isolation: the spare child touches the template pages the last invocations "
    "touched. Job 1 reads all 3 pages of a file the template maps, then truncates the file to one "
    "page (the mapping's pages 1-2 are now past EOF: any access is SIGBUS). Later jobs only read "
    "page 0, which is valid under local (fresh 1-page mapping) and in the template's old 3-page "
    "mapping. The spare child now 'touches' pages 1-2 past EOF: with MADV_POPULATE_* that is "
    "EFAULT, with a plain read it is SIGBUS in the child that is to run job 2 (lost/failed job "
    "instead of local's success). Outputs are identical unless the pre-touching breaks.",
    _s(r"""
m = st["m"]
head = bytes(m[:8]).decode()
if k == 1:
    mid = bytes(m[4096:4104]).decode()
    tail = bytes(m[8192:8200]).decode()
    m[4200:4203] = b"zzz"              # private writes: recorded as written template pages
    m[8300:8303] = b"zzz"
    with open(st["path"], "r+b") as f:
        f.truncate(4096)
else:
    mid = tail = "-"
with open(OUT, "w") as o:
    o.write(f"k={k} head={head} mid={mid} tail={tail}\n")
"""),
    build=_b(r"""
    import mmap, os
    f = open("data/t.bin", "rb")
    m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_COPY)
    return {"m": m, "f": f, "path": os.path.abspath("data/t.bin")}
"""),
    n=4,
    files={"data/t.bin": "a" * 12288},
)

# 8 -------------------------------------------------------------------------
case(
    "pretouch_races_with_script_writes",
    "docs/sticky.md, isolation: the spare child touches pages 'and stops as soon as its script "
    "arrives' and 'changes no memory contents'. The template holds a 4 MiB bytearray; every job "
    "immediately writes its k into byte 0 of every page (the same pages the last job touched, so "
    "exactly the ones being pre-touched), then checks every page holds k and that byte 1 of every "
    "page is still the template's 0 (the job sets it to 7 at the end, which must never reach "
    "another job). A touching thread or a read-then-write touch still running when the script "
    "starts would lose some of the script's writes. Local: mismatches=0 byte1_values_at_start=[0].",
    _s(r"""
buf = st["buf"]
PAGE = 4096
n = len(buf) // PAGE
for i in range(n):
    buf[i * PAGE] = k
byte1 = sorted(set(buf[i * PAGE + 1] for i in range(n)))
mismatches = sum(1 for i in range(n) if buf[i * PAGE] != k)
for i in range(n):
    buf[i * PAGE + 1] = 7
with open(OUT, "w") as o:
    o.write(f"k={k} pages={n} mismatches={mismatches} byte1_values_at_start={byte1}\n")
"""),
    build=_b(r"""
    return {"buf": bytearray(4 * 1024 * 1024)}
"""),
    n=4,
)

# 9 -------------------------------------------------------------------------
case(
    "getrusage_minor_faults_of_template_update",
    "docs/sticky.md, isolation: 'a child's first write to a template page copies it ... the "
    "spare child touches the pages of the template the last invocations touched'. A script "
    "checks with resource.getrusage that updating its state object (256 pages of a bytearray the "
    "template filled) costs no page faults: under local the pages are already the process's own, "
    "so ru_minflt grows by a handful at most (local: few_faults=True in every job). In a forked "
    "child each first write is a copy-on-write fault (>= 256 in job 1, which has no recorded "
    "pages to pre-touch); later jobs depend on whether the spare pre-touched them.",
    _s(r"""
import resource
buf = st["buf"]
r0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for i in range(256):
    buf[i * 4096] = 1
r1 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
with open(OUT, "w") as o:
    o.write(f"k={k} few_faults={r1 - r0 < 64} ru_nswap={resource.getrusage(resource.RUSAGE_SELF).ru_nswap}\n")
"""),
    build=_b(r"""
    return {"buf": bytearray(256 * 4096)}
"""),
    n=3,
)

# 10 ------------------------------------------------------------------------
case(
    "process_status_signals_threads_limits",
    "docs/sticky.md, isolation: 'While it waits, that child also touches the pages ... and stops "
    "as soon as its script arrives' (a thread, a signal or a timer could be how it is stopped). "
    "Compares what a script can read about its own process that is fixed under local: "
    "/proc/self/status Threads/SigPnd/ShdPnd/SigBlk/SigIgn/SigCgt/NoNewPrivs/Seccomp/VmLck/VmPin/"
    "THP_enabled/Cap*, Python-level signal handlers, the signal mask, pending signals, interval "
    "timers, alarm, RUSAGE_CHILDREN (all zero in a fresh process), os.times() children times, "
    "rlimits, niceness, affinity size, comm, threading's view, prctl timer slack/dumpable/"
    "child-subreaper/THP-disable. A leftover helper thread, handler, blocked signal, itimer, or a "
    "raised NOFILE limit in the worker shows here.",
    _s(r"""
import ctypes, os, resource, signal, threading
want = ("Threads", "SigPnd", "ShdPnd", "SigBlk", "SigIgn", "SigCgt", "NoNewPrivs", "Seccomp",
        "VmLck", "VmPin", "THP_enabled", "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")
status = {}
with open("/proc/self/status") as f:
    for line in f:
        key, _, val = line.partition(":")
        if key in want:
            status[key] = val.strip()
def hname(h):
    if h is signal.SIG_DFL:
        return "DFL"
    if h is signal.SIG_IGN:
        return "IGN"
    if h is None:
        return "None"
    return f"{getattr(h, '__module__', '?')}.{getattr(h, '__qualname__', type(h).__name__)}"
handlers = {}
for s in sorted(signal.valid_signals()):
    if s in (signal.SIGKILL, signal.SIGSTOP):
        continue
    try:
        h = signal.getsignal(s)
    except (ValueError, OSError):
        continue
    if h is not signal.SIG_DFL:
        handlers[int(s)] = hname(h)
mask = sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, []))
pending = sorted(int(s) for s in signal.sigpending())
timers = [signal.getitimer(t) for t in (signal.ITIMER_REAL, signal.ITIMER_VIRTUAL, signal.ITIMER_PROF)]
alarm_left = signal.alarm(0)
ch = resource.getrusage(resource.RUSAGE_CHILDREN)
children = tuple(getattr(ch, f) for f in ("ru_utime", "ru_stime", "ru_maxrss", "ru_minflt", "ru_majflt",
                                          "ru_inblock", "ru_oublock", "ru_nvcsw", "ru_nivcsw"))
t = os.times()
limits = {name: resource.getrlimit(getattr(resource, name)) for name in
          ("RLIMIT_NOFILE", "RLIMIT_CORE", "RLIMIT_STACK", "RLIMIT_AS", "RLIMIT_DATA",
           "RLIMIT_MEMLOCK", "RLIMIT_NPROC", "RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_SIGPENDING")}
libc = ctypes.CDLL(None, use_errno=True)
libc.prctl.restype = ctypes.c_int
sub = ctypes.c_int(-1)
libc.prctl(37, ctypes.byref(sub), 0, 0, 0)          # PR_GET_CHILD_SUBREAPER
prctl = {"timerslack": libc.prctl(30, 0, 0, 0, 0),   # PR_GET_TIMERSLACK
         "dumpable": libc.prctl(3, 0, 0, 0, 0),      # PR_GET_DUMPABLE
         "thp_disable": libc.prctl(42, 0, 0, 0, 0),  # PR_GET_THP_DISABLE
         "child_subreaper": sub.value}
with open("/proc/self/comm") as f:
    comm = f.read().strip()
lines = [
    f"k={k}",
    f"status={status}",
    f"python_handlers={handlers}",
    f"blocked={mask} pending={pending} itimers={timers} alarm_left={alarm_left}",
    f"rusage_children={children} os_times_children={(t.children_user, t.children_system)}",
    f"rlimits={limits}",
    f"nice={os.getpriority(os.PRIO_PROCESS, 0)} affinity={len(os.sched_getaffinity(0))} comm={comm}",
    f"prctl={prctl}",
    f"threading active={threading.active_count()} tasks={len(os.listdir('/proc/self/task'))} "
    f"current={threading.current_thread().name} is_main={threading.current_thread() is threading.main_thread()}",
]
with open(OUT, "w") as o:
    o.write("\n".join(lines) + "\n")
"""),
    n=3,
)

# 11 ------------------------------------------------------------------------
case(
    "import_naming_touches_odd_sys_modules_entries",
    "docs/sticky.md, Warm up: 'a library the scripts import and the template does not is "
    "imported again by every forked job ... and the run says so once per template'. Finding those "
    "libraries means reading the job's sys.modules. Real scripts leave odd entries there: None "
    "(the standard way to block an optional dependency), a non-module object whose __getattr__ "
    "has side effects (sh-style modules), an importlib.util.LazyLoader module (any attribute "
    "access, e.g. __file__/__spec__/__name__, executes it) and a vendored path holding a "
    "dist-info folder without METADATA (importlib.metadata.packages_distributions() raises "
    "TypeError on it in 3.11). Under local nothing reads them after the script: "
    "attrs_read_by_someone=[] lazymod_executed=False, and every job succeeds. If the detector "
    "touches them, the lazy module runs (its side effect file appears for the next job), the spy "
    "records attribute names, or the detector crashes on None/TypeError.",
    _s(r"""
import importlib.util, os, sys
wd = os.getcwd()
spylog = os.path.join(wd, "spy_attrs.txt")
seen = open(spylog).read().split() if os.path.exists(spylog) else []
lazy_ran = os.path.exists(os.path.join(wd, "lazy_executed.txt"))
def make_spy(path):
    class Spy:
        def __getattr__(self, name):
            with open(path, "a") as f:
                f.write(name + "\n")
            raise AttributeError(name)
    return Spy()
sys.modules["rt_blocked_optional_dep"] = None
sys.modules["rt_spy"] = make_spy(spylog)
sys.path.insert(0, wd)
spec = importlib.util.find_spec("lazymod")
loader = importlib.util.LazyLoader(spec.loader)
spec.loader = loader
lazy = importlib.util.module_from_spec(spec)
sys.modules["lazymod"] = lazy
loader.exec_module(lazy)                      # not executed until an attribute is read
sys.path.insert(0, os.path.join(wd, "vendor"))
import rtvendored
with open(OUT, "w") as o:
    o.write(f"k={k} attrs_read_by_someone={sorted(set(seen))} lazymod_executed={lazy_ran} "
            f"vendored={rtvendored.VALUE}\n")
"""),
    n=3,
    files={
        "lazymod.py": _s(r"""
import os
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "lazy_executed.txt"), "a") as _f:
    _f.write("executed\n")
VALUE = 42
"""),
        "vendor/rtvendored.py": "VALUE = 5\n",
        "vendor/rt_broken-1.0.dist-info/INSTALLER": "pip\n",
    },
)

# 12 ------------------------------------------------------------------------
case(
    "atexit_sees_imports_made_after_the_script",
    "docs/sticky.md: 'A fresh interpreter's exit ... the script's atexit handlers run' and the "
    "new naming of libraries a forked job imports (computed at the job's end). If the child "
    "imports anything after the script's last line and before its atexit handlers (e.g. "
    "importlib.metadata to map modules to distributions, concurrent.futures to finish pools), an "
    "atexit handler that lists modules added since the script's end sees them; a fresh "
    "interpreter imports nothing there (local LOG: 'modules imported after ...: []'). Also "
    "compares the import machinery the script sees (meta_path, path_hooks, builtins.__import__) "
    "at start and in atexit: an import-recording finder or __import__ wrapper shows.",
    _s(r"""
import atexit, builtins, json, sys
def shape():
    mp = [f.__name__ if isinstance(f, type) else type(f).__name__ for f in sys.meta_path]
    ph = [getattr(h, "__qualname__", type(h).__name__) for h in sys.path_hooks]
    imp = (getattr(builtins.__import__, "__module__", None), getattr(builtins.__import__, "__qualname__", None))
    return mp, ph, imp
START = shape()
END = {}
def at_exit():
    added = sorted(set(sys.modules) - END["mods"])
    with open(LOG, "a") as f:
        f.write(f"atexit: modules imported after the script's last line: {added}\n")
        f.write(f"atexit: import machinery unchanged since start: {shape() == START}\n")
atexit.register(at_exit)
with open(OUT, "w") as o:
    o.write(f"k={k} meta_path={START[0]} path_hooks={START[1]} __import__={START[2]} json={json.dumps([k])}\n")
with open(LOG, "w") as f:
    f.write("script done\n")
END["mods"] = set(sys.modules)
"""),
    n=2,
)

# 13 ------------------------------------------------------------------------
case(
    "rlimit_nofile_zero_after_outputs",
    "docs/sticky.md: 'each recording child lists its pages from /proc/self/pagemap once its job "
    "is done' (and the job's imports are named then). A script that drops its own RLIMIT_NOFILE "
    "soft limit to 0 after writing its outputs (a sandboxing habit before running untrusted "
    "parsing code, say) exits fine under local: Python opens nothing while it exits. The "
    "recording child must open /proc/self/pagemap (and maybe more) after the job: EMFILE there "
    "must not fail or lose the job. Local: every job succeeds.",
    _s(r"""
import resource
with open(OUT, "w") as o:
    o.write(f"k={k} done\n")
with open(LOG, "w") as f:
    f.write("lowering RLIMIT_NOFILE's soft limit to 0 for the rest of this process\n")
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (0, hard))
"""),
    n=3,
)

# 14 ------------------------------------------------------------------------
case(
    "warmup_inside_fork_rng_keeps_fixed_seeds",
    "docs/sticky.md, Warm up the template ('one small inference before the return ... the "
    "warm-up changes nothing a job sees') and 'the last call that set a generator decides, so the "
    '"temporary seed" idiom, which reads the state, seeds, draws and sets the state back, '
    "leaves it random'. This template seeds torch/numpy/random with fixed seeds FIRST, then warms "
    "up inside torch.random.fork_rng() (and numpy/random get_state/seed/set_state around a "
    "helper), i.e. the temporary-seed idiom applied to an already fixed state: the last call is a "
    "set_state back to a FIXED state, so under local every job draws the same numbers. If the "
    "idiom is classified as 'random' regardless of what was read, the job's generators are "
    "reseeded from the OS and the draws differ.",
    _s(r"""
import random
import numpy as np
import torch
with open(OUT, "w") as o:
    o.write(f"k={k} torch={torch.rand(3).tolist()}\n")
    o.write(f"numpy={np.random.rand(3).tolist()}\n")
    o.write(f"random={[random.random() for _ in range(3)]}\n")
    with torch.no_grad():
        o.write(f"model={st['model'](torch.ones(1, 8)).tolist()}\n")
"""),
    build=_b(r"""
    import random
    import numpy as np
    import torch
    torch.manual_seed(0)
    np.random.seed(0)
    random.seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Dropout(0.5), torch.nn.Linear(8, 2))
    with torch.random.fork_rng():           # warm-up that must not disturb the seeded generator
        torch.manual_seed(1234)
        model.train()
        model(torch.randn(4, 8)).sum().backward()
    model.zero_grad(set_to_none=True)
    model.eval()
    saved = np.random.get_state()           # a helper that seeds for its own draws ...
    np.random.seed(99)
    np.random.rand(3)
    np.random.set_state(saved)              # ... and puts the template's fixed state back
    saved_py = random.getstate()
    random.seed(77)
    random.random()
    random.setstate(saved_py)
    return {"model": model}
"""),
    n=3,
)

# 15 ------------------------------------------------------------------------
case(
    "global_generators_fixed_without_seed_functions",
    "docs/sticky.md, isolation: 'a generator the template seeded with a fixed seed "
    "(torch.manual_seed(0), random.seed(0), transformers.set_seed(0)) starts as the build left "
    "it ... which generators the template seeded is recorded while it builds'. Fixed states set "
    "through other documented calls: torch.default_generator.manual_seed(5) (the Generator's own "
    "method, not torch.manual_seed), np.random.set_state(RandomState(6).get_state()) and "
    "random.setstate(Random(7).getstate()) (restoring a saved fixed state, no seed call). Under "
    "local each job draws the same numbers; if only the seed functions are recorded, the job's "
    "generators are reseeded from the OS.",
    _s(r"""
import random
import numpy as np
import torch
with open(OUT, "w") as o:
    o.write(f"k={k} torch={torch.rand(3).tolist()}\n")
    o.write(f"numpy={np.random.rand(3).tolist()}\n")
    o.write(f"random={[random.random() for _ in range(3)]}\n")
"""),
    build=_b(r"""
    import random
    import numpy as np
    import torch
    torch.default_generator.manual_seed(5)
    np.random.set_state(np.random.RandomState(6).get_state())
    random.setstate(random.Random(7).getstate())
    return {"calls": 0}
"""),
    n=3,
)

# 16 ------------------------------------------------------------------------
case(
    "generator_objects_fixed_after_creation",
    "docs/sticky.md, isolation: 'Generator objects the template made from the OS "
    "(np.random.default_rng(), random.Random(), in its state ...) are reseeded from the OS too; a "
    "template's fixed-seed ones keep their state.' Objects made from the OS and THEN given a fixed "
    "seed/state (random.Random() then .seed(11); default_rng() then bit_generator.state = "
    "PCG64(12).state), a fixed one built without default_rng (Generator(MT19937(13))), and "
    "torch.Generator(), whose default seed is the fixed 67280421310721 (not the OS). All draw the "
    "same numbers in every local job; reseeding by how the object was created changes them.",
    _s(r"""
import torch
with open(OUT, "w") as o:
    o.write(f"k={k} random_Random={[st['r'].random() for _ in range(3)]}\n")
    o.write(f"default_rng_then_state={st['g'].random(3).tolist()}\n")
    o.write(f"Generator_MT19937={st['g2'].random(3).tolist()}\n")
    o.write(f"torch_Generator={torch.rand(3, generator=st['tg']).tolist()} seed={st['tg'].initial_seed()}\n")
"""),
    build=_b(r"""
    import random
    import numpy as np
    import torch
    r = random.Random()
    r.seed(11)
    g = np.random.default_rng()
    g.bit_generator.state = np.random.PCG64(12).state
    g2 = np.random.Generator(np.random.MT19937(13))
    tg = torch.Generator()
    return {"r": r, "g": g, "g2": g2, "tg": tg}
"""),
    n=3,
)

# 17 ------------------------------------------------------------------------
case(
    "template_sets_torch_thread_counts_without_computing",
    "docs/sticky.md, isolation: 'torch's and the BLAS libraries' thread pools are sized to the "
    "job's threads, as a fresh job sizes them from its OMP_NUM_THREADS', and Warm up ('with the "
    "template's thread pools at one thread'). This template sets torch.set_num_threads(3) and "
    "set_num_interop_threads(2) explicitly and computes nothing (no pool threads started, so it "
    "stays forkable). A fresh job that builds it has 3 intra-op / 2 inter-op threads, whatever "
    "OMP_NUM_THREADS says (local: get_num_threads=3 interop=2, parallel_info accordingly). "
    "Resizing the pools to the job's threads (1) in the child, or the worker having set the "
    "interop count already, changes what the job sees.",
    _s(r"""
import torch
x = torch.ones(64, 64)
s = float((x @ x).sum())
with open(OUT, "w") as o:
    o.write(f"k={k} get_num_threads={torch.get_num_threads()} interop={torch.get_num_interop_threads()} matmul_sum={s}\n")
    o.write(torch.__config__.parallel_info())
"""),
    build=_b(r"""
    import torch
    torch.set_num_threads(3)
    torch.set_num_interop_threads(2)
    return {"calls": 0}
"""),
    n=2,
)

# 18 ------------------------------------------------------------------------
case(
    "thread_and_context_local_settings_of_the_build",
    "docs/sticky.md: 'A fresh job builds the template the same way, so the warm-up changes "
    "nothing a job sees' and 'the template's state as the template built it, and what the "
    "template build ... set up'. Many settings an inference template makes are thread- or "
    "context-local: torch.set_grad_enabled(False), decimal.getcontext().prec, numpy 2's "
    "np.seterr (a contextvar), a contextvars.ContextVar, a threading.local. Under local the build "
    "runs in the job's main thread, so the script sees them all (grad_enabled=False, 1/7 with 6 "
    "digits, FloatingPointError, 'set-by-template', 'template', MainThread). If the worker builds "
    "in another thread/context than the one its children are forked from/run in, they vanish.",
    _s(r"""
import decimal, threading
import numpy as np
import torch
x = torch.ones(2, requires_grad=True)
y = (x * 2).sum()
try:
    np.array([1.0]) / np.array([0.0])
    npres = "no error"
except FloatingPointError as e:
    npres = f"FloatingPointError: {e}"
lines = [
    f"k={k}",
    f"grad_enabled={torch.is_grad_enabled()} y.requires_grad={y.requires_grad}",
    f"decimal 1/7={decimal.Decimal(1) / decimal.Decimal(7)}",
    f"numpy 1/0: {npres} geterr={sorted(np.geterr().items())}",
    f"contextvar={st['var'].get()}",
    f"threading.local={getattr(st['tl'], 'value', 'missing')}",
    f"thread={threading.current_thread().name} is_main={threading.current_thread() is threading.main_thread()}",
]
with open(OUT, "w") as o:
    o.write("\n".join(lines) + "\n")
"""),
    build=_b(r"""
    import contextvars, decimal, threading
    import numpy as np
    import torch
    torch.set_grad_enabled(False)
    decimal.getcontext().prec = 6
    np.seterr(all="raise")
    var = contextvars.ContextVar("rt_var", default="unset")
    var.set("set-by-template")
    tl = threading.local()
    tl.value = "template"
    return {"var": var, "tl": tl}
"""),
    n=2,
)

# 19 ------------------------------------------------------------------------
case(
    "shared_memory_in_template_state",
    "docs/sticky.md, isolation: 'nothing an invocation does to its process (... changes to the "
    "state object itself, ...) can reach another invocation'. Three ordinary ways a template "
    "holds memory that fork SHARES instead of copying: mmap.mmap(-1, n) (Python's default is "
    "MAP_SHARED anonymous), multiprocessing.Value (shared heap arena) and a torch tensor after "
    ".share_memory_(). Each job increments them. Local: every job prints 1 / 1 / [1.0, ...]. In "
    "fork mode the children write the same physical pages as the worker: job k prints k.",
    _s(r"""
m, v, t = st["m"], st["v"], st["t"]
m[0] = (m[0] + 1) % 256
with v.get_lock():
    v.value += 1
t += 1
with open(OUT, "w") as o:
    o.write(f"k={k} mmap_counter={m[0]} mp_value={v.value} shared_tensor={t.tolist()}\n")
"""),
    build=_b(r"""
    import mmap, multiprocessing
    import torch
    m = mmap.mmap(-1, 4096)
    v = multiprocessing.Value("i", 0)
    t = torch.zeros(4).share_memory_()
    return {"m": m, "v": v, "t": t}
"""),
    n=3,
)

# 20 ------------------------------------------------------------------------
case(
    "template_file_handle_read_offset_is_shared",
    "docs/sticky.md, isolation: 'changes to the state object itself' cannot reach another "
    "invocation (direct mode lists 'a file handle kept in it' as carrying over; fork mode claims "
    "none). A template that keeps an open data file (a text file object and a raw descriptor) "
    "for its jobs to read: forked children share the open file description, so the kernel offset "
    "job 1 advanced is where job 2 starts. Local: every job reads all three lines, both ways.",
    _s(r"""
import os
text_lines = st["f"].read().splitlines()
raw = os.read(st["fd"], 1000).decode()
with open(OUT, "w") as o:
    o.write(f"k={k} text_lines={text_lines} raw={raw!r}\n")
"""),
    build=_b(r"""
    import os
    f = open("data/lines.txt", "r")
    fd = os.open("data/lines2.txt", os.O_RDONLY)
    return {"f": f, "fd": fd}
"""),
    n=3,
    files={"data/lines.txt": "alpha\nbeta\ngamma\n", "data/lines2.txt": "one\ntwo\nthree\n"},
)

# 21 ------------------------------------------------------------------------
case(
    "template_file_handle_write_offset_is_shared",
    "docs/sticky.md, isolation (as above) for writing: the template keeps a file opened 'r+' (no "
    "truncation) and each job writes one record through it and flushes. In a fresh job the "
    "handle starts at offset 0, so the record overwrites the first 5 bytes (local: file starts "
    "'jobk\\n56789'). Forked children share the file description's offset: job 2 writes after "
    "job 1's record ('job1\\njob2\\n...').",
    _s(r"""
st["f"].write(f"job{k}\n")
st["f"].flush()
with open("data/trace.txt") as r:
    content = r.read()
with open(OUT, "w") as o:
    o.write(f"k={k} file={content!r}\n")
"""),
    build=_b(r"""
    f = open("data/trace.txt", "r+")
    return {"f": f}
"""),
    n=3,
    files={"data/trace.txt": "0123456789\n" * 3},
)

# 22 ------------------------------------------------------------------------
case(
    "template_fork_hooks_and_wipeonfork",
    "docs/sticky.md contract: a job has 'the template's state as the template built it'. A "
    "template written fork-safely (as connection pools and caches are) registers "
    "os.register_at_fork(after_in_child=...) to drop its connection in forked children, and one "
    "keeps a secret in MADV_WIPEONFORK memory (as RNG/crypto libraries do). A fresh job that "
    "builds it never forks: conn=open secret=hello. Every fork-mode child, forked ahead from the "
    "worker, runs the hook and gets zeroed memory: conn=None secret=zeros.",
    _s(r"""
with open(OUT, "w") as o:
    o.write(f"k={k} conn={st['conn']} secret={bytes(st['secret'][:5])!r}\n")
"""),
    build=_b(r"""
    import mmap, os
    state = {"conn": "open"}
    def _after_fork_in_child():
        state["conn"] = None
    os.register_at_fork(after_in_child=_after_fork_in_child)
    secret = mmap.mmap(-1, 4096, flags=mmap.MAP_PRIVATE)
    secret[:5] = b"hello"
    secret.madvise(18)          # MADV_WIPEONFORK
    state["secret"] = secret
    return state
"""),
    n=2,
)

# 23 ------------------------------------------------------------------------
case(
    "job_forks_and_child_calls_sys_exit",
    "docs/sticky.md, 'A fresh interpreter's exit, in both modes' and 'In fork mode os._exit(n) "
    "ends only that invocation's child'. The script os.fork()s; the forked process writes a "
    "line and calls sys.exit(3), the script waits for it and reports its exit code. Under local "
    "the forked copy of the interpreter unwinds SystemExit, runs the script's atexit handler "
    "(in that copy), and exits 3; the job succeeds. LOG: start / forked child ... / atexit ran in "
    "the forked child / parent: child exit code 3 / atexit ran in the parent. In sticky the "
    "forked process unwinds into the worker's frames: it may report the job itself (exit 3 = "
    "failure), skip the atexit handler, or run the end-of-job recording/reporting twice.",
    _s(r"""
import atexit, os, sys
parent = os.getpid()
def note():
    who = "parent" if os.getpid() == parent else "forked child"
    with open(LOG, "a") as f:
        f.write(f"atexit ran in the {who}\n")
with open(LOG, "w") as f:
    f.write("start\n")
atexit.register(note)
pid = os.fork()
if pid == 0:
    with open(LOG, "a") as f:
        f.write("forked child: exiting with sys.exit(3)\n")
    sys.exit(3)
_, status = os.waitpid(pid, 0)
code = os.waitstatus_to_exitcode(status)
with open(LOG, "a") as f:
    f.write(f"parent: child exit code {code}\n")
with open(OUT, "w") as o:
    o.write(f"k={k} child_exit_code={code}\n")
"""),
    n=2,
)

# 24 ------------------------------------------------------------------------
# "spawn_pool_in_a_forked_job" dropped: under --executor local its spawn pool's workers die at
# start and the pool replaces them forever (the job never ends), so it cannot be compared.

# 25 ------------------------------------------------------------------------
case(
    "main_module_interpreter_and_stdio_shape",
    "docs/sticky.md: 'The script runs as __main__ with the preamble's globals ...' and the "
    "contract (a fresh `python script.py`). What the script can see of its interpreter that is "
    "fixed under local: the names in its globals, type(__builtins__) ('module' in __main__, a "
    "dict elsewhere), __loader__/__spec__/__package__/__cached__, whether sys.modules['__main__'] "
    "is its namespace, sys.orig_argv[1:] == sys.argv, sys.flags, recursion limit, switch "
    "interval, int digit limit, stdout/stderr attributes (line_buffering, write_through: a worker "
    "run with -u differs), warnings filters and the root logger. The forked child inherits the "
    "worker's interpreter (its -m command line, flags, filters, handlers).",
    _s(r"""
import logging, os, sys, warnings
SKIP = {"stickyinvoc", "st", "k", "OUT", "LOG", "os", "logging", "warnings", "SKIP"}
names = sorted(n for n in list(globals()) if n not in SKIP)
def io_shape(s):
    return (type(s).__name__, getattr(s, "encoding", None), getattr(s, "errors", None),
            getattr(s, "line_buffering", None), getattr(s, "write_through", None),
            type(getattr(s, "buffer", None)).__name__)
filters = [(a, c.__name__, getattr(m, "pattern", m), getattr(mod, "pattern", mod), ln)
           for a, m, c, mod, ln in warnings.filters]
root = logging.getLogger()
lines = [
    f"k={k}",
    f"globals={names}",
    f"builtins={type(__builtins__).__name__} loader={type(globals().get('__loader__')).__name__} "
    f"spec={globals().get('__spec__')!r} package={globals().get('__package__')!r} "
    f"cached={globals().get('__cached__', '<absent>')!r} doc={globals().get('__doc__')!r}",
    f"main_is_globals={sys.modules['__main__'].__dict__ is globals()} "
    f"orig_argv_tail_is_argv={sys.orig_argv[1:] == sys.argv} len_argv={len(sys.argv)}",
    f"flags={sys.flags!r}",
    f"recursionlimit={sys.getrecursionlimit()} switchinterval={sys.getswitchinterval()} "
    f"int_max_str_digits={sys.get_int_max_str_digits()} dont_write_bytecode={sys.dont_write_bytecode}",
    f"stdout={io_shape(sys.stdout)} stderr={io_shape(sys.stderr)} "
    f"stdout_is_dunder={sys.stdout is sys.__stdout__} stderr_is_dunder={sys.stderr is sys.__stderr__}",
    f"warnings.filters={filters}",
    f"root_logger level={root.level} handlers={[type(h).__name__ for h in root.handlers]}",
]
with open(OUT, "w") as o:
    o.write("\n".join(lines) + "\n")
"""),
    n=2,
)
