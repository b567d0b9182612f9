"""The independent red team's cases for the sticky contract (issue 25), kept as written.

A helper that saw only README.md and docs/sticky.md (not the code, not the tests) wrote 66
scripts a real workflow could contain on which sticky and ``--executor local`` might differ;
each case is a rule of 3 jobs (5 for ``exit_codes``) chained through their inputs so that they
run in order on one worker. ``test_redteam.py`` runs them all, fork mode and direct mode,
against ``--executor local``. First pass (before the fixes of this issue): 28 differed, 11 in
fork mode (one hang) and 25 in direct mode.

``case(name, description, script, build=..., n=3, chain=True, extra=rule lines, files=...,
header=True, resources=...)``: ``script`` follows ``HEADER`` (``st`` the template's state,
``k`` the job number, ``OUT``/``LOG`` its output and log); ``build`` is the template's body.
"""

# ruff: noqa: E501

HEADER = """\
import stickyinvoc
st = stickyinvoc.state(snakemake)
k = int(snakemake.wildcards.k)
OUT = snakemake.output[0]
LOG = snakemake.log[0]
"""

DEFAULT_BUILD = 'return {"calls": 0}'

CASES = {}


def case(
    name,
    desc,
    script,
    build=DEFAULT_BUILD,
    n=3,
    chain=True,
    extra="",
    files=None,
    header=True,
    resources="sticky=T",
):
    CASES[name] = dict(
        desc=desc,
        script=script,
        build=build,
        n=n,
        chain=chain,
        extra=extra,
        files=files or {},
        header=header,
        resources=resources,
    )


# ---------------------------------------------------------------- library global state
case(
    "mpl_colormap_register",
    "registers a custom colormap with matplotlib.colormaps.register at top level",
    """
import matplotlib
matplotlib.use("Agg")
import matplotlib as mpl
from matplotlib.colors import LinearSegmentedColormap
cmap = LinearSegmentedColormap.from_list("wf_div", ["#2166ac", "#f7f7f7", "#b2182b"])
mpl.colormaps.register(cmap)
open(OUT, "w").write(f"registered; wf_div in colormaps: {'wf_div' in mpl.colormaps}\\n")
""",
)

case(
    "mpl_figures_not_closed",
    "plots with pyplot and saves without plt.close(); records figure number and lines in gcf",
    """
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
fig = plt.figure()
plt.plot([0, 1], [0, k])
n_lines = len(plt.gca().get_lines())
open(OUT, "w").write(f"fig.number={fig.number} open_figs={len(plt.get_fignums())} lines={n_lines}\\n")
""",
)

case(
    "mpl_backend_env_before_import",
    "sets MPLBACKEND per job before importing matplotlib, records backend",
    """
import os
os.environ["MPLBACKEND"] = ["agg", "svg", "pdf"][k - 1]
import matplotlib
open(OUT, "w").write(f"backend={matplotlib.get_backend()}\\n")
""",
)

case(
    "torch_grad_mode",
    "job 1 (inference) calls torch.set_grad_enabled(False); later jobs train a step",
    """
import torch
obs = f"grad_enabled_at_start={torch.is_grad_enabled()}"
if k == 1:
    torch.set_grad_enabled(False)  # inference job: no autograd
else:
    w = torch.ones(3, requires_grad=True)
    try:
        (w * 2).sum().backward()
        obs += f" grad={w.grad.tolist()}"
    except RuntimeError as e:
        obs += f" backward_error={type(e).__name__}"
open(OUT, "w").write(obs + "\\n")
""",
    build="""
import torch
return {"calls": 0}
""",
)

case(
    "torch_printoptions",
    "job 1 sets torch.set_printoptions(precision=2); all write repr of a tensor first",
    """
import torch
obs = repr(torch.tensor([1 / 3, 2 / 3]))
if k == 1:
    torch.set_printoptions(precision=2, sci_mode=False)
open(OUT, "w").write(obs + "\\n")
""",
    build="""
import torch
return {"calls": 0}
""",
)

case(
    "torch_rng_unseeded",
    "template builds an nn.Linear; script draws torch.rand unseeded (dropout-like noise) and compares with the previous job's draw",
    """
import os, torch
x = " ".join(f"{v:.6f}" for v in torch.rand(3).tolist())
os.makedirs("draws", exist_ok=True)
open(f"draws/{k}.txt", "w").write(x)
prev = open(f"draws/{k - 1}.txt").read() if k > 1 else ""
open(OUT, "w").write(f"same_draw_as_previous_job={x == prev}\\n")
""",
    build="""
import torch
model = torch.nn.Linear(4, 2)
return {"model": model}
""",
)

case(
    "torch_misc_globals",
    "job 1 enables determinism/anomaly/matmul precision/cudnn flags; all record them first",
    """
import torch
obs = (f"det={torch.are_deterministic_algorithms_enabled()} anomaly={torch.is_anomaly_enabled()} "
       f"mm={torch.get_float32_matmul_precision()} cudnn_det={torch.backends.cudnn.deterministic} "
       f"cudnn_bench={torch.backends.cudnn.benchmark}")
if k == 1:
    torch.use_deterministic_algorithms(True)
    torch.autograd.set_detect_anomaly(True)
    torch.set_float32_matmul_precision("medium")
    torch.backends.cudnn.deterministic = True
    torch.backends.cudnn.benchmark = False
    torch.backends.cudnn.benchmark = True
open(OUT, "w").write(obs + "\\n")
""",
    build="""
import torch
return {"calls": 0}
""",
)

case(
    "torch_interop_threads",
    "HPC idiom: torch.set_num_threads(threads); torch.set_num_interop_threads(1)",
    """
import torch
torch.set_num_threads(snakemake.threads)
try:
    torch.set_num_interop_threads(1)
    obs = "interop=1"
except RuntimeError as e:
    obs = "interop_error"
    raise
finally:
    open(LOG, "w").write(obs + "\\n")
y = (torch.arange(16.).reshape(4, 4) @ torch.ones(4)).tolist()
open(OUT, "w").write(f"{obs} {y}\\n")
""",
    build="""
import torch
return {"calls": 0}
""",
)

case(
    "torch_distributed_init",
    "single-node DDP-style init_process_group(gloo, tcp://127.0.0.1:29533), no destroy",
    """
import torch
import torch.distributed as dist
dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29533", rank=0, world_size=1)
t = torch.tensor([float(k)])
dist.all_reduce(t)
open(OUT, "w").write(f"allreduce={t.item()} world={dist.get_world_size()}\\n")
""",
    build="""
import torch
return {"calls": 0}
""",
)

case(
    "torch_jit_script",
    "torch.jit.script on a function defined in the script",
    """
import torch
def scale(x: torch.Tensor, f: float) -> torch.Tensor:
    return x * f + 1.0
s = torch.jit.script(scale)
open(OUT, "w").write(f"{s(torch.ones(2), float(k)).tolist()}\\n")
""",
    build="""
import torch
return {"calls": 0}
""",
)

case(
    "torch_threads_after_fork",
    "template runs a multi-threaded matmul (4 threads); job runs one with snakemake.threads",
    """
import torch
torch.set_num_threads(2)
a = torch.arange(300 * 300, dtype=torch.float64).reshape(300, 300) % 7
b = (a @ a).sum().item()
open(OUT, "w").write(f"sum={b:.1f} threads={torch.get_num_threads()}\\n")
""",
    build="""
import torch
torch.set_num_threads(4)
a = torch.arange(300 * 300, dtype=torch.float64).reshape(300, 300) % 5
_ = (a @ a).sum()
return {"calls": 0}
""",
)

case(
    "torch_dataloader_workers",
    "torch DataLoader(num_workers=2) over a Dataset class defined in the script",
    """
import torch
from torch.utils.data import Dataset, DataLoader
class Squares(Dataset):
    def __len__(self): return 8
    def __getitem__(self, i): return torch.tensor([float(i * i + k)])
dl = DataLoader(Squares(), batch_size=4, num_workers=2)
tot = sum(b.sum().item() for b in dl)
open(OUT, "w").write(f"sum={tot}\\n")
""",
    build="""
import torch
return {"calls": 0}
""",
)

case(
    "sklearn_set_config",
    "job 1 sets sklearn.set_config(transform_output='pandas'); all record fit_transform type first",
    """
import numpy as np, sklearn
from sklearn.preprocessing import StandardScaler
X = np.arange(6.0).reshape(3, 2)
obs = type(StandardScaler().fit_transform(X)).__name__
if k == 1:
    sklearn.set_config(transform_output="pandas", assume_finite=True)
open(OUT, "w").write(f"{obs} assume_finite={sklearn.get_config()['assume_finite']}\\n")
""",
)

case(
    "sklearn_state_partial_fit",
    "template holds a fitted SGDClassifier; script calls partial_fit on its batch then predicts",
    """
import numpy as np
clf = st["clf"]
X = np.array([[k, 1.0], [-k, -1.0]])
clf.partial_fit(X, [1, 0])
open(OUT, "w").write(" ".join(f"{c:.6f}" for c in clf.coef_.ravel()) + "\\n")
""",
    build="""
import numpy as np
from sklearn.linear_model import SGDClassifier
clf = SGDClassifier(random_state=0, max_iter=5, tol=None)
clf.fit(np.array([[1.0, 0.0], [-1.0, 0.0]]), [1, 0])
return {"clf": clf}
""",
)

case(
    "transformers_autoconfig_register",
    "registers a custom model type with AutoConfig.register / AutoModel.register",
    """
from transformers import AutoConfig, AutoModel, PretrainedConfig, PreTrainedModel
import torch
class TinyConfig(PretrainedConfig):
    model_type = "wf-tiny"
    def __init__(self, hidden=4, **kw):
        self.hidden = hidden
        super().__init__(**kw)
class TinyModel(PreTrainedModel):
    config_class = TinyConfig
    def __init__(self, config):
        super().__init__(config)
        self.lin = torch.nn.Linear(config.hidden, 1)
AutoConfig.register("wf-tiny", TinyConfig)
AutoModel.register(TinyConfig, TinyModel)
cfg = AutoConfig.for_model("wf-tiny", hidden=k + 1)
open(OUT, "w").write(f"{type(cfg).__name__} hidden={cfg.hidden}\\n")
""",
    build="""
import transformers
return {"calls": 0}
""",
)

case(
    "pandas_accessor_register",
    "registers a DataFrame accessor at top level; records warnings emitted",
    """
import warnings
import pandas as pd
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    @pd.api.extensions.register_dataframe_accessor("qc")
    class QC:
        def __init__(self, df): self._df = df
        def n_bad(self): return int((self._df["x"] < 0).sum())
df = pd.DataFrame({"x": [-1, k, -3]})
open(OUT, "w").write(f"n_bad={df.qc.n_bad()} warnings={[type(x.message).__name__ for x in w]}\\n")
""",
)

case(
    "json_encoder_monkeypatch",
    "job 1 monkeypatches json.JSONEncoder.default for datetimes; all try json.dumps(date) first",
    """
import json, datetime
try:
    obs = json.dumps({"d": datetime.date(2020, 1, k)})
except TypeError:
    obs = "TypeError"
if k == 1:
    json.JSONEncoder.default = lambda self, o: o.isoformat()
open(OUT, "w").write(obs + "\\n")
""",
)

case(
    "mimetypes_add_type",
    "job 1 registers a MIME type for .fcs files; all guess type of 'a.fcs' first",
    """
import mimetypes
obs = str(mimetypes.guess_type("sample.fcs"))
if k == 1:
    mimetypes.add_type("application/vnd.isac.fcs", ".fcs")
open(OUT, "w").write(obs + "\\n")
""",
)

case(
    "logging_addlevelname",
    "job 1 adds a NOTICE level name; all record logging.getLevelName(25) first",
    """
import logging
obs = logging.getLevelName(25)
if k == 1:
    logging.addLevelName(25, "NOTICE")
open(OUT, "w").write(f"{obs}\\n")
""",
)

case(
    "documented_settings",
    "job 1 changes the documented settings (np/pd/mpl/decimal/csv/socket/gc/env/cwd/random); all record first",
    """
import os, csv, decimal, socket, gc, random, sys
OUTA = os.path.abspath(OUT)
import numpy as np, pandas as pd, matplotlib
obs = [repr(np.array([1 / 3])), str(np.geterr()["divide"]), str(pd.get_option("display.precision")),
       str(matplotlib.rcParams["lines.linewidth"]), str(decimal.getcontext().prec), str(csv.field_size_limit()),
       str(socket.getdefaulttimeout()), str(gc.isenabled()), os.environ.get("WF_FLAG", "-"),
       str(os.path.exists("Snakefile")), str(sys.getrecursionlimit())]
if k == 1:
    np.set_printoptions(precision=2); np.seterr(all="raise"); pd.set_option("display.precision", 2)
    matplotlib.rcParams["lines.linewidth"] = 3.0; decimal.getcontext().prec = 5
    csv.field_size_limit(10 ** 8); socket.setdefaulttimeout(3.0); gc.disable()
    os.environ["WF_FLAG"] = "1"; sys.setrecursionlimit(5000); random.seed(1)
    os.makedirs("sub", exist_ok=True); os.chdir("sub")
open(OUTA, "w").write("\\n".join(obs) + "\\n")
""",
)

# ---------------------------------------------------------------- process-level / stdlib
case(
    "tzset_leak",
    "job 1 sets TZ=Asia/Tokyo and time.tzset() for its log timestamps; all format epoch 0 first",
    """
import os, time
obs = time.strftime("%Y-%m-%d %H:%M %Z", time.localtime(0))
if k == 1:
    os.environ["TZ"] = "Asia/Tokyo"
    time.tzset()
open(OUT, "w").write(obs + "\\n")
""",
)

case(
    "int_max_str_digits",
    "job 1 lifts sys.set_int_max_str_digits(0) for big integers; all try str(10**5000) first",
    """
import sys
try:
    obs = f"len={len(str(10 ** 5000))}"
except ValueError:
    obs = "ValueError"
if k == 1:
    sys.set_int_max_str_digits(0)
open(OUT, "w").write(obs + "\\n")
""",
)

case(
    "rlimit_core_as",
    "job 1 disables core dumps and caps address space with resource.setrlimit; all record limits first",
    """
import resource
obs = f"core={resource.getrlimit(resource.RLIMIT_CORE)} as={resource.getrlimit(resource.RLIMIT_AS)}"
if k == 1:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_AS, (16 * 2 ** 30, resource.RLIM_INFINITY))
open(OUT, "w").write(obs + "\\n")
""",
)

case(
    "os_nice",
    "job 1 lowers its priority with os.nice(5) (background job); all record os.nice(0) first",
    """
import os
obs = f"nice={os.nice(0)}"
if k == 1:
    os.nice(5)
open(OUT, "w").write(obs + "\\n")
""",
)

case(
    "sigmask_block",
    "job 1 blocks SIGINT/SIGTERM around a critical section and forgets to unblock; all record mask first",
    """
import signal
obs = sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, []))
if k == 1:
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
open(OUT, "w").write(f"blocked={obs}\\n")
""",
)

case(
    "gc_callbacks",
    "job 1 appends a gc callback (memory profiling); all record len(gc.callbacks) first",
    """
import gc
obs = len(gc.callbacks)
if k == 1:
    stats = []
    gc.callbacks.append(lambda phase, info: stats.append(phase))
open(OUT, "w").write(f"gc_callbacks={obs}\\n")
""",
)

case(
    "audit_hook_provenance",
    "adds sys.addaudithook that appends each subprocess launch to the job's log; runs `true`",
    """
import sys, subprocess
def hook(ev, args, _log=LOG):
    if ev == "subprocess.Popen":
        with open(_log, "a") as f:
            f.write(f"{ev} {args[1][0] if args[1] else args[0]}\\n")
sys.addaudithook(hook)
subprocess.run(["true"], check=True)
open(OUT, "w").write("done\\n")
""",
)

case(
    "faulthandler_watchdog",
    "job 1 arms faulthandler.dump_traceback_later(3, exit=True) as a hang guard; jobs sleep 2 s",
    """
import faulthandler, time
if k == 1:
    faulthandler.dump_traceback_later(3, exit=True)
time.sleep(2)
open(OUT, "w").write("finished\\n")
""",
)

case(
    "signal_alarm_timeout",
    "job 1 arms signal.alarm(3) with a TimeoutError handler and never cancels; jobs sleep 2 s",
    """
import signal, time
def on_alarm(signum, frame):
    raise TimeoutError("job took too long")
if k == 1:
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(3)
time.sleep(2)
open(OUT, "w").write("finished\\n")
""",
)

case(
    "shared_memory_named",
    "creates SharedMemory(name='wf_shm_case', create=True) and does not unlink it",
    """
from multiprocessing import shared_memory
import numpy as np
shm = shared_memory.SharedMemory(name="wf_shm_case", create=True, size=64)
a = np.ndarray((8,), dtype=np.int64, buffer=shm.buf)
a[:] = k
open(OUT, "w").write(f"sum={int(a.sum())}\\n")
del a
shm.close()
""",
)

case(
    "mp_set_start_method",
    "calls multiprocessing.set_start_method('forkserver') in the main guard",
    """
import multiprocessing as mp
if __name__ == "__main__":
    mp.set_start_method("forkserver")
    open(OUT, "w").write(f"start_method={mp.get_start_method()}\\n")
""",
)

case(
    "mp_spawn_pool",
    "ProcessPoolExecutor with spawn context; script reads snakemake.* at top level",
    """
import concurrent.futures as cf, multiprocessing as mp
N = int(snakemake.wildcards.k) + 2
def sq(x):
    return x * x
if __name__ == "__main__":
    with cf.ProcessPoolExecutor(2, mp_context=mp.get_context("spawn")) as ex:
        r = list(ex.map(sq, range(N)))
    open(OUT, "w").write(f"{r}\\n")
""",
    header=False,
    files={},
)

case(
    "ppe_fork_main_class",
    "ProcessPoolExecutor (fork) returning a dataclass defined in the script",
    """
import concurrent.futures as cf
from dataclasses import dataclass
@dataclass
class Res:
    i: int
    sq: int
def work(i):
    return Res(i, i * i + k)
with cf.ProcessPoolExecutor(2) as ex:
    r = list(ex.map(work, range(4)))
open(OUT, "w").write(repr(r) + "\\n")
""",
)

case(
    "os_fork_child_sys_exit",
    "os.fork(); the child writes a part file and ends with sys.exit(0); parent waits and merges",
    """
import os, sys
part = OUT + ".part"
pid = os.fork()
if pid == 0:
    with open(part, "w") as f:
        f.write(f"child of job {k}\\n")
    sys.exit(0)
_, status = os.waitpid(pid, 0)
with open(part) as f:
    txt = f.read()
os.remove(part)
open(OUT, "w").write(txt + f"child_status={os.waitstatus_to_exitcode(status)}\\n")
""",
)

case(
    "stdin_read",
    "reads standard input if it is not a terminal (tool-style fallback), records its length",
    """
import sys
data = sys.stdin.read() if not sys.stdin.isatty() else ""
open(OUT, "w").write(f"stdin_len={len(data)}\\n")
""",
)

case(
    "threads_active_count",
    "starts and joins worker threads, then records threading.active_count() and names",
    """
import threading
ts = [threading.Thread(target=lambda: None, name=f"w{i}") for i in range(2)]
for t in ts: t.start()
for t in ts: t.join()
names = sorted(t.name for t in threading.enumerate())
open(OUT, "w").write(f"active={threading.active_count()} names={names} main={threading.current_thread() is threading.main_thread()}\\n")
""",
)

case(
    "proc_identity",
    "records __name__, globals, argv, sys.path[0], script dir idiom, flags, stdio state",
    """
import os, sys
g = sorted(x for x in globals() if not x.startswith("__"))
cwd = os.getcwd()
obs = {
  "name": __name__, "globals": g, "argc": len(sys.argv),
  "argv0_dir": os.path.relpath(os.path.dirname(os.path.abspath(sys.argv[0])), cwd),
  "path0": os.path.relpath(sys.path[0], cwd) if sys.path[0] else "''",
  "file": os.path.relpath(__file__, cwd),
  "real_file_dir": os.path.relpath(os.path.dirname(__real_file__), cwd),
  "spec": repr(__spec__), "loader": type(__loader__).__name__ if "__loader__" in globals() else None,
  "builtins": type(__builtins__).__name__,
  "flags": [sys.flags.optimize, sys.flags.dont_write_bytecode, sys.flags.no_user_site, sys.flags.isolated,
            sys.flags.ignore_environment, sys.flags.unbuffered if hasattr(sys.flags, "unbuffered") else None,
            sys.flags.utf8_mode, sys.flags.dev_mode, sys.flags.safe_path],
  "warnoptions": sys.warnoptions, "xoptions": sys._xoptions,
  "stdin": [sys.stdin is not None and sys.stdin.closed, sys.stdin.isatty() if sys.stdin else None],
  "stdout_enc": [sys.stdout.encoding, sys.stdout.line_buffering, sys.stdout.isatty()],
  "stderr_enc": [sys.stderr.encoding, sys.stderr.line_buffering],
  "dont_write_bytecode": sys.dont_write_bytecode, "exec_is_sys": os.path.realpath(sys.executable),
}
import json
open(OUT, "w").write(json.dumps(obs, indent=1, sort_keys=True) + "\\n")
""",
)

case(
    "proc_signals_warnings_logging",
    "records signal dispositions, warnings.filters and the root logger as a fresh script sees them",
    """
import signal, warnings, logging, sys, os, gc
def disp(s):
    h = signal.getsignal(s)
    return h if isinstance(h, (int, type(None))) else getattr(h, "__qualname__", repr(h))
obs = [f"{s.name}={disp(s)}" for s in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE, signal.SIGCHLD,
                                       signal.SIGHUP, signal.SIGUSR1, signal.SIGALRM, signal.SIGXFSZ)]
obs.append(f"filters={[(f[0], f[2].__name__, f[4]) for f in warnings.filters]}")
obs.append(f"root={logging.getLevelName(logging.root.level)} handlers={[type(h).__name__ for h in logging.root.handlers]}")
obs.append(f"loggers_with_handlers={sorted(n for n, l in logging.root.manager.loggerDict.items() if getattr(l, 'handlers', None))}")
obs.append(f"umask={oct(os.umask(0o022))} gc_threshold={gc.get_threshold()} switch={sys.getswitchinterval()}")
obs.append(f"excepthook={sys.excepthook.__qualname__} displayhook={sys.displayhook.__qualname__} trace={sys.gettrace()} profile={sys.getprofile()}")
open(OUT, "w").write("\\n".join(obs) + "\\n")
""",
)

case(
    "proc_env_threads",
    "rule with threads: 2 and a tmpdir; records thread env vars, TMPDIR, torch/BLAS thread counts, env keys",
    """
import os, tempfile, json
import threadpoolctl
import torch
keys = ["OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
        "NUMEXPR_NUM_THREADS", "GOTO_NUM_THREADS", "RAYON_NUM_THREADS", "TMPDIR", "TEMP", "TMP", "TEMPDIR",
        "PYTHONHASHSEED", "PYTHONUNBUFFERED", "PYTHONPATH", "PYTHONNOUSERSITE", "CUDA_VISIBLE_DEVICES",
        "MPLBACKEND", "TOKENIZERS_PARALLELISM"]
cwd = os.getcwd()
def rel(v): return os.path.relpath(v, cwd) if v and v.startswith("/") else v
obs = {key: rel(os.environ.get(key)) for key in keys}
obs["gettempdir"] = rel(tempfile.gettempdir())
obs["torch_threads"] = torch.get_num_threads()
obs["blas"] = sorted((d["internal_api"], d["num_threads"]) for d in threadpoolctl.threadpool_info())
obs["env_keys"] = sorted(x for x in os.environ if not x.startswith(("SNAKEMAKE_",)))
open(OUT, "w").write(json.dumps(obs, indent=1, sort_keys=True) + "\\n")
""",
    build="""
import torch
return {"calls": 0}
""",
    extra="    threads: 2\n",
    chain=True,
)

case(
    "tempfile_in_template",
    "template unpacks its model into tempfile.mkdtemp(); rule sets resources tmpdir='scratch'",
    """
import os, tempfile
cwd = os.getcwd()
d = tempfile.gettempdir()
with tempfile.NamedTemporaryFile(dir=None) as f:
    where = os.path.dirname(f.name)
open(OUT, "w").write(f"gettempdir={os.path.relpath(d, cwd)} ntf_dir={os.path.relpath(where, cwd)} TMPDIR={os.path.relpath(os.environ.get('TMPDIR','/'), cwd)}\\n")
""",
    build="""
import tempfile, os
d = tempfile.mkdtemp(prefix="model-")
open(os.path.join(d, "weights.bin"), "wb").write(b"\\0" * 16)
return {"model_dir": d}
""",
    resources='sticky=T, tmpdir="scratch"',
)

case(
    "blas_threads_env_before_import",
    "sets OPENBLAS/OMP_NUM_THREADS=k before importing numpy; records BLAS threads",
    """
import os
os.environ["OMP_NUM_THREADS"] = str(k)
os.environ["OPENBLAS_NUM_THREADS"] = str(k)
import numpy as np
import threadpoolctl
info = sorted((d["internal_api"], d["num_threads"]) for d in threadpoolctl.threadpool_info())
open(OUT, "w").write(f"{info}\\n")
""",
    header=False,
)

case(
    "inspect_getsource",
    "writes inspect.getsource() of its scoring function to the output for provenance",
    """
import inspect
def score(x):
    # weighted score
    return 2 * x + 1
open(OUT, "w").write(inspect.getsource(score) + f"score={score(k)}\\n")
""",
)

case(
    "traceback_in_output",
    "catches an error and writes traceback frame (lineno, line) to the output",
    """
import traceback
try:
    vals = [1, 2, 0]
    r = 10 / vals[k - 1]
    obs = f"ok {r}"
except ZeroDivisionError as e:
    fr = traceback.extract_tb(e.__traceback__)[-1]
    obs = f"error at line {fr.lineno}: {fr.line} in {fr.name}"
open(OUT, "w").write(obs + "\\n")
""",
)

case(
    "pickle_main_class",
    "pickles an instance of a class defined in the script; writes the bytes as hex",
    """
import pickle
class Sample:
    def __init__(self, k): self.k = k
b = pickle.dumps(Sample(k), protocol=4)
back = pickle.loads(b)
open(OUT, "w").write(b.hex() + f"\\nback={back.k}\\n")
""",
)

case(
    "subprocess_sigint_graceful",
    "runs a python training tool as a subprocess and stops it early with SIGINT (it checkpoints on KeyboardInterrupt)",
    '''
import subprocess, sys, signal, time
tool = """
import sys, time
print("ready", flush=True)
try:
    for epoch in range(40):
        time.sleep(0.1)
    print("completed all epochs", flush=True)
except KeyboardInterrupt:
    print("interrupted: checkpoint saved", flush=True)
"""
p = subprocess.Popen([sys.executable, "-c", tool], stdout=subprocess.PIPE, text=True)
first = p.stdout.readline().strip()
time.sleep(0.5)
p.send_signal(signal.SIGINT)
rest = p.stdout.read().strip()
rc = p.wait()
open(OUT, "w").write(f"{first} | {rest} | rc={rc}\\n")
''',
)

# ---------------------------------------------------------------- exit, stderr, atexit, files
case(
    "stderr_redirect_exit_message",
    "idiom sys.stderr = open(log); job 2 calls sys.exit('QC failed ...')",
    """
import sys
sys.stderr = open(LOG, "w")
print(f"processing sample {k}", file=sys.stderr)
if k == 2:
    sys.exit(f"QC failed for sample {k}")
open(OUT, "w").write("ok\\n")
""",
    chain=False,
)

case(
    "stderr_redirect_traceback",
    "idiom sys.stderr = open(log); job 2 raises ValueError; traceback should land in the log",
    """
import sys
sys.stderr = open(LOG, "w")
print(f"processing sample {k}", file=sys.stderr)
def check(v):
    if v == 2:
        raise ValueError(f"bad sample {v}")
check(k)
open(OUT, "w").write("ok\\n")
""",
    chain=False,
)

case(
    "custom_excepthook",
    "installs sys.excepthook that logs uncaught exceptions to the job log; job 2 raises",
    """
import sys
def hook(t, v, tb):
    with open(LOG, "a") as f:
        f.write(f"uncaught {t.__name__}: {v}\\n")
sys.excepthook = hook
open(LOG, "w").write(f"start {k}\\n")
if k == 2:
    raise RuntimeError("model diverged")
open(OUT, "w").write("ok\\n")
""",
    chain=False,
)

case(
    "warnings_once_to_log",
    "sys.stderr = open(log); fits LogisticRegression(max_iter=1) twice (ConvergenceWarning)",
    """
import sys
sys.stderr = open(LOG, "w")
import numpy as np
from sklearn.linear_model import LogisticRegression
X = np.array([[0.0, 1.0], [1.0, 0.0], [1.0, 1.0], [0.0, 0.0]] * 5)
y = np.array([0, 1, 1, 0] * 5)
for _ in range(2):
    LogisticRegression(max_iter=1).fit(X, y)
sys.stderr.flush()
open(OUT, "w").write("fitted\\n")
""",
)

case(
    "atexit_handlers",
    "atexit handler writes the output; a second atexit handler raises (ignored by Python)",
    """
import atexit
def write():
    open(OUT, "w").write(f"written at exit {k}\\n")
def cleanup():
    raise RuntimeError("cleanup failed")
atexit.register(write)
atexit.register(cleanup)
""",
)

case(
    "atexit_sys_exit",
    "atexit handler calls sys.exit(3) after the output is written",
    """
import atexit, sys
open(OUT, "w").write("ok\\n")
atexit.register(lambda: sys.exit(3))
""",
    chain=False,
)

case(
    "exit_codes",
    "sys.exit with False / numpy int 0 / 0.0 / 256 / True after writing the output",
    """
import sys
import numpy as np
open(OUT, "w").write("ok\\n")
code = {1: False, 2: np.int64(0), 3: 0.0, 4: 256, 5: True}[k]
sys.exit(code)
""",
    n=5,
    chain=False,
)

case(
    "os_exit_unflushed",
    "writes the output without closing it, then os._exit(0)",
    """
import os
f = open(OUT, "w")
f.write("line that is never flushed\\n")
os._exit(0)
""",
    chain=False,
)

case(
    "stdout_redirect_unclosed",
    "sys.stdout = open(log) and prints, never closed",
    """
import sys
sys.stdout = open(LOG, "w")
for i in range(3):
    print(f"step {i} of job {k}")
open(OUT, "w").write("ok\\n")
""",
)

case(
    "fd_dup2_subprocess_order",
    "dup2s the log onto fd 1, prints (buffered) then runs a subprocess that writes to fd 1",
    """
import os, sys, subprocess
fd = os.open(LOG, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.dup2(fd, 1)
print(f"python line of job {k}")
subprocess.run(["echo", "tool line"], check=True)
open(OUT, "w").write("ok\\n")
""",
)

case(
    "file_in_ref_cycle_unclosed",
    "writer object in a reference cycle holds the open output file; never closed",
    """
class Writer:
    def __init__(self, path):
        self.f = open(path, "w")
        self.me = self
w = Writer(OUT)
w.f.write(f"row {k}\\n")
del w
""",
)

case(
    "gzip_unclosed",
    "gzip.open(output, 'wt') via csv.writer, never closed",
    """
import gzip, csv, io
w = csv.writer(io.TextIOWrapper(gzip.GzipFile(OUT, "wb", mtime=0)))
for i in range(3):
    w.writerow([k, i])
""",
    chain=False,
)

case(
    "state_holds_open_file",
    "script caches an open results writer on the state object (st.setdefault) and writes through it",
    """
import os
w = open(OUT, "w")
st.setdefault("writers", []).append(w)
w.write(f"result {k}\\n")
""",
    chain=False,
)

case(
    "nondaemon_thread_and_mp_process",
    "non-daemon thread and an unjoined multiprocessing.Process write parts of the output after main ends",
    """
import threading, time, multiprocessing as mp
def part(name, delay):
    time.sleep(delay)
    open(OUT + "." + name, "w").write(name + "\\n")
def merge():
    time.sleep(0.8)
    parts = [open(OUT + "." + n).read() for n in ("thread", "proc")]
    open(OUT, "w").write("".join(parts))
threading.Thread(target=part, args=("thread", 0.3)).start()
mp.get_context("fork").Process(target=part, args=("proc", 0.3)).start()
threading.Thread(target=merge).start()
""",
)

case(
    "executor_not_shutdown",
    "submits tasks to a ThreadPoolExecutor without waiting; tasks write the output",
    """
import concurrent.futures as cf, time
ex = cf.ThreadPoolExecutor(2)
def task(i):
    time.sleep(0.2 * i)
    with open(OUT, "a") as f:
        f.write(f"task {i}\\n")
for i in range(3):
    ex.submit(task, i)
""",
    chain=False,
)

case(
    "sqlite_uncommitted",
    "writes rows to a sqlite output without commit or close",
    """
import sqlite3
con = sqlite3.connect(OUT)
con.execute("create table t (k int, v text)")
con.execute("insert into t values (?, ?)", (k, "x"))
""",
    chain=False,
)

case(
    "shell_settings",
    "uses snakemake.shell inside the script; job 1 sets shell.prefix; records shell options",
    """
from snakemake.shell import shell
x = k * 10
shell("set -o | grep -E '^(pipefail|errexit|nounset|xtrace)' | tr -s ' \\t' ' ' > {OUT}; echo x={x} >> {OUT}; echo $0 | xargs basename >> {OUT}")
if k == 1:
    shell.prefix("set -x; ")
""",
)

case(
    "benchmark_repeat_log_append",
    "benchmark: repeat(3); script appends a line per run to its log",
    """
with open(LOG, "a") as f:
    f.write(f"run of job {k}\\n")
open(OUT, "w").write("ok\\n")
""",
    extra='    benchmark: repeat("bench/{k}.tsv", 3)\n',
)

case(
    "local_helper_module_state",
    "imports a helper module from scripts/ that counts its imports at module level",
    """
import sys, os
import wfutils
wfutils.CALLS += 1
open(OUT, "w").write(f"calls={wfutils.CALLS} loaded_from={os.path.relpath(wfutils.__file__)}\\n")
""",
    files={"scripts/wfutils.py": "CALLS = 0\n"},
)

case(
    "workdir_package_import",
    "tries to import a package at the workflow root (wflib/) without sys.path changes",
    """
try:
    import wflib
    obs = f"imported {wflib.NAME}"
except ImportError as e:
    obs = "ImportError"
open(OUT, "w").write(obs + "\\n")
""",
    files={"wflib/__init__.py": "NAME = 'wflib'\n"},
)

case(
    "register_at_fork_reseed",
    "job 1 registers os.register_at_fork(after_in_child=reseed torch(0)); all use a fork pool drawing torch.rand",
    """
import os, torch, multiprocessing as mp
if k == 1:
    os.register_at_fork(after_in_child=lambda: torch.manual_seed(0))
torch.manual_seed(100 + k)
def draw(_):
    return round(torch.rand(1).item(), 6)
with mp.get_context("fork").Pool(1) as p:
    r = p.map(draw, range(1))
open(OUT, "w").write(f"{r}\\n")
""",
    build="""
import torch
return {"calls": 0}
""",
)
