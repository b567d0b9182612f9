"""The independent red teams' cases for the sticky contract (issue 25), kept as written.

Round 1: a helper that saw only README.md and docs/sticky.md (not the code, not the tests)
wrote 66 scripts a real workflow could contain on which sticky and ``--executor local`` might
differ. First pass (before the fixes of this issue): 28 differed, 11 in fork mode (one hang) and
25 in direct mode. Round 2: a second helper, the same brief, the docs after round 1's fixes,
asked for the newer parts (how generators start, one template per worker, the temporary
script, the exit sequence): 30 more cases (below the round-2 line). Each case is a rule of 3
jobs (5 for ``exit_codes``) chained through their inputs so that they run in order on one
worker; ``test_redteam.py`` runs them all, fork mode and direct mode, against
``--executor local``.

``case(name, description, script, build=..., n=3, chain=True, extra=rule lines, files=...,
header=True, resources=...)``: ``script`` follows ``HEADER`` (``st`` the template's state,
``k`` the job number, ``OUT``/``LOG`` its output and log); ``build`` is the template's body.
"""

# ruff: noqa: E501

import functools

HEADER = """\
import stickyinvoc
st = stickyinvoc.state(snakemake)
k = int(snakemake.wildcards.k)
OUT = snakemake.output[0]
LOG = snakemake.log[0]
"""

DEFAULT_BUILD = 'return {"calls": 0}'

CASES = {}


def add_case(
    cases,
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
    """One case into ``cases`` (the red teams' files each keep their own)."""
    cases[name] = dict(
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


case = functools.partial(add_case, CASES)


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
    "single-node DDP-style init_process_group(gloo, tcp://127.0.0.1:PORT), no destroy "
    "(one port per job: a CI run once failed local's third job, which rebinds the second's port)",
    """
import torch
import torch.distributed as dist
dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{29530 + k}", rank=0, world_size=1)
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


# ==================================================================================
# Round 2: a second red team (the same brief, the docs after this fixes): 30 cases.
# ====================================================================== random generators
case(
    "template_temporary_seed_restored",
    "template seeds random/numpy only inside a save-seed-restore block (temp_seed idiom), leaving the OS-random streams: a seed() recorded during the build must not make every job replay the same draws",
    """
import os, random
import numpy as np
SIDE = "side/template_temporary_seed_restored"
os.makedirs(SIDE, exist_ok=True)
cur = {
    "py": repr([random.random() for _ in range(4)]),
    "np": repr(np.random.random(4).tolist()),
}
lines = [f"weights={np.round(st['weights'], 6).tolist()} order={st['order']}"]
for name, val in cur.items():
    with open(f"{SIDE}/{name}_{k}.txt", "w") as f:
        f.write(val)
    if k > 1:
        prev = open(f"{SIDE}/{name}_{k - 1}.txt").read()
        lines.append(f"{name}: same_draws_as_previous_job={val == prev}")
with open(OUT, "w") as f:
    f.write("\\n".join(lines) + "\\n")
""",
    build="""
import random
import numpy as np
py_state = random.getstate()
np_state = np.random.get_state()
random.seed(1234)
np.random.seed(1234)
weights = np.random.standard_normal(8)
order = random.sample(range(100), 5)
random.setstate(py_state)      # put the global streams back as they were
np.random.set_state(np_state)
return {"weights": weights, "order": order}
""",
)

case(
    "template_seed_then_reseed_os",
    "template seeds random/numpy/torch with 0 for a deterministic init, then re-randomises them (random.seed(), np.random.seed(), torch.seed()); jobs must get fresh draws, not the build's final state replayed",
    """
import os, random
import numpy as np
import torch
SIDE = "side/template_seed_then_reseed_os"
os.makedirs(SIDE, exist_ok=True)
cur = {
    "py": repr([random.random() for _ in range(3)]),
    "np": repr(np.random.random(3).tolist()),
    "torch": repr(torch.rand(3).tolist()),
}
w = st["layer"].weight.detach()
lines = [f"init_weight_sum={round(float(w.sum()), 6)} perm={st['perm']}"]
for name, val in cur.items():
    with open(f"{SIDE}/{name}_{k}.txt", "w") as f:
        f.write(val)
    if k > 1:
        prev = open(f"{SIDE}/{name}_{k - 1}.txt").read()
        lines.append(f"{name}: same_draws_as_previous_job={val == prev}")
with open(OUT, "w") as f:
    f.write("\\n".join(lines) + "\\n")
""",
    build="""
import random
import numpy as np
import torch
random.seed(0)
np.random.seed(0)
torch.manual_seed(0)
layer = torch.nn.Linear(4, 2)
perm = np.random.permutation(10).tolist()
# deterministic init done; re-randomise the global streams for sampling
random.seed()
np.random.seed()
torch.seed()
return {"layer": layer, "perm": perm}
""",
)

case(
    "template_seeds_from_pid_or_urandom",
    "template seeds with per-process values (np.random.seed(os.getpid()), random.seed(os.urandom(16)), torch.manual_seed(urandom)): each fresh job gets a different stream; a seed call with an argument is not a 'fixed seed'",
    """
import os, random
import numpy as np
import torch
SIDE = "side/template_seeds_from_pid_or_urandom"
os.makedirs(SIDE, exist_ok=True)
cur = {
    "np": repr(np.random.random(3).tolist()),
    "py": repr([random.random() for _ in range(3)]),
    "torch": repr(torch.rand(3).tolist()),
}
lines = []
for name, val in cur.items():
    with open(f"{SIDE}/{name}_{k}.txt", "w") as f:
        f.write(val)
    if k > 1:
        prev = open(f"{SIDE}/{name}_{k - 1}.txt").read()
        lines.append(f"{name}: same_draws_as_previous_job={val == prev}")
with open(OUT, "w") as f:
    f.write("\\n".join([f"job {k}"] + lines) + "\\n")
""",
    build="""
import os, random
import numpy as np
import torch
np.random.seed(os.getpid() % 2**32)          # 'a different stream per process' idiom
random.seed(os.urandom(16))
torch.manual_seed(int.from_bytes(os.urandom(8), "little") % 2**63)
return {"calls": 0}
""",
)

case(
    "template_restores_rng_checkpoint",
    "template resumes RNG state from a checkpoint with random.setstate / np.random.set_state / torch.set_rng_state (no seed() call): every fresh job starts on that fixed state, so sticky must not reseed these from the OS",
    """
import random
import numpy as np
import torch
py = [random.random() for _ in range(3)]
npd = np.random.random(3).tolist()
td = torch.rand(3).tolist()
r = random.Random(123)
exp_py = [r.random() for _ in range(3)]
exp_np = np.random.RandomState(123).random_sample(3).tolist()
exp_t = torch.rand(3, generator=torch.Generator().manual_seed(123)).tolist()
with open(OUT, "w") as f:
    f.write(f"py={py} matches_checkpoint={py == exp_py}\\n")
    f.write(f"np={npd} matches_checkpoint={npd == exp_np}\\n")
    f.write(f"torch={td} matches_checkpoint={td == exp_t}\\n")
""",
    build="""
import random
import numpy as np
import torch
ckpt = {  # RNG states as a training checkpoint stores them (made deterministic here)
    "py": random.Random(123).getstate(),
    "np": np.random.RandomState(123).get_state(),
    "torch": torch.Generator().manual_seed(123).get_state(),
}
random.setstate(ckpt["py"])
np.random.set_state(ckpt["np"])
torch.set_rng_state(ckpt["torch"])
return {"calls": 0}
""",
)

case(
    "seed_via_alias_paths",
    "template seeds through other entry points than torch.manual_seed / np.random.seed: torch.default_generator.manual_seed(11) and numpy.random.mtrand.seed(11); a fresh job replays the seeded streams, so sticky must record these as fixed seeds too",
    """
import numpy as np
import torch
td = torch.rand(3).tolist()
npd = np.random.random(3).tolist()
exp_t = torch.rand(3, generator=torch.Generator().manual_seed(11)).tolist()
exp_np = np.random.RandomState(11).random_sample(3).tolist()
with open(OUT, "w") as f:
    f.write(f"torch={td} matches_seed_11={td == exp_t}\\n")
    f.write(f"np={npd} matches_seed_11={npd == exp_np}\\n")
""",
    build="""
import numpy as np
import torch
torch.default_generator.manual_seed(11)
np.random.mtrand.seed(11)
return {"calls": 0}
""",
)

case(
    "state_unseeded_generator_objects",
    "state holds unseeded generator OBJECTS (np.random.default_rng(), RandomState(), random.Random()); fresh jobs each get OS entropy, but forked children all inherit the same generator state and draw identical numbers",
    """
import os
SIDE = "side/state_unseeded_generator_objects"
os.makedirs(SIDE, exist_ok=True)
cur = {
    "np_generator": repr(st["np_gen"].random(4).tolist()),
    "np_randomstate": repr(st["np_legacy"].random_sample(4).tolist()),
    "py_random": repr([st["py"].random() for _ in range(4)]),
}
lines = []
for name, val in cur.items():
    with open(f"{SIDE}/{name}_{k}.txt", "w") as f:
        f.write(val)
    if k > 1:
        prev = open(f"{SIDE}/{name}_{k - 1}.txt").read()
        lines.append(f"{name}: same_draws_as_previous_job={val == prev}")
with open(OUT, "w") as f:
    f.write("\\n".join([f"job {k}"] + lines) + "\\n")
""",
    build="""
import random
import numpy as np
return {
    "np_gen": np.random.default_rng(),
    "np_legacy": np.random.RandomState(),
    "py": random.Random(),
}
""",
)

case(
    "helper_module_generators",
    "a workflow helper module imported by the template keeps module-level generators, one unseeded (noise) and one seeded (split); fresh jobs: noise differs per job, split identical; fork copies the noise state, direct mode advances the split",
    """
import os
import wf_noise
SIDE = "side/helper_module_generators"
os.makedirs(SIDE, exist_ok=True)
noise = repr(wf_noise.jitter(4).tolist())
with open(f"{SIDE}/noise_{k}.txt", "w") as f:
    f.write(noise)
lines = [f"split={wf_noise.split(10).tolist()}"]
if k > 1:
    prev = open(f"{SIDE}/noise_{k - 1}.txt").read()
    lines.append(f"noise: same_as_previous_job={noise == prev}")
with open(OUT, "w") as f:
    f.write("\\n".join(lines) + "\\n")
""",
    build="""
import os, sys
sys.path.insert(0, os.path.abspath("wfhelpers"))
import wf_noise
return {"calls": 0}
""",
    files={
        "wfhelpers/wf_noise.py": (
            "import numpy as np\n"
            "_JITTER = np.random.default_rng()      # unseeded: fresh noise per process\n"
            "_SPLIT = np.random.default_rng(2024)   # seeded: the same split in every process\n"
            "\n"
            "def jitter(n):\n"
            "    return _JITTER.normal(size=n)\n"
            "\n"
            "def split(n):\n"
            "    return _SPLIT.permutation(n)\n"
        )
    },
)

case(
    "template_full_determinism_helper",
    "template calls transformers.enable_full_determinism(42) (seeds via set_seed, sets CUBLAS_WORKSPACE_CONFIG etc. in os.environ, deterministic algorithms); job and its subprocess must see the env vars, the flag and the seeded streams",
    """
import os, random, subprocess, sys
import numpy as np
import torch
keys = ["CUBLAS_WORKSPACE_CONFIG", "CUDA_LAUNCH_BLOCKING", "FLASH_ATTENTION_DETERMINISTIC"]
env = {key: os.environ.get(key) for key in keys}
child = subprocess.run(
    [sys.executable, "-c", "import os; print(os.environ.get('CUBLAS_WORKSPACE_CONFIG'))"],
    capture_output=True, text=True,
).stdout.strip()
r = random.Random(42)
py = [random.random() for _ in range(2)]
npd = np.random.random(2).tolist()
w = st["model"].weight.detach().flatten().tolist()
with open(OUT, "w") as f:
    f.write(f"env={env} subprocess_sees={child}\\n")
    f.write(f"deterministic_algorithms={torch.are_deterministic_algorithms_enabled()}\\n")
    f.write(f"py_matches_seed={py == [r.random(), r.random()]}\\n")
    f.write(f"np_matches_seed={npd == np.random.RandomState(42).random_sample(2).tolist()}\\n")
    f.write(f"init={[round(x, 6) for x in w]} torch_draw={[round(x, 6) for x in torch.rand(2).tolist()]}\\n")
""",
    build="""
import torch
from transformers import enable_full_determinism
enable_full_determinism(42)
model = torch.nn.Linear(3, 1)
return {"model": model}
""",
)

case(
    "per_process_hash_and_authkey",
    "str hash seed (set iteration order of strings) and multiprocessing authkey are per-process random in fresh jobs; forked children all share the worker's, so jobs see the same order/key as the previous job",
    """
import hashlib, os
import multiprocessing as mp
SIDE = "side/per_process_hash_and_authkey"
os.makedirs(SIDE, exist_ok=True)
words = [f"claim_{i:03d}" for i in range(200)]
cur = {
    "set_order": hashlib.sha256(",".join(set(words)).encode()).hexdigest(),
    "authkey": hashlib.sha256(bytes(mp.current_process().authkey)).hexdigest(),
}
lines = []
for name, val in cur.items():
    with open(f"{SIDE}/{name}_{k}.txt", "w") as f:
        f.write(val)
    if k > 1:
        prev = open(f"{SIDE}/{name}_{k - 1}.txt").read()
        lines.append(f"{name}: same_as_previous_job={val == prev}")
with open(OUT, "w") as f:
    f.write("\\n".join([f"job {k}"] + lines) + "\\n")
""",
)

# ====================================================================== how the template builds its state
case(
    "template_build_thread_env",
    "with threads: 2, a fresh job builds the template under OMP_NUM_THREADS=2 (torch 2 threads); the worker builds under OMP_NUM_THREADS=1, so the state records other settings and float reductions computed at build differ in the last bits",
    """
import torch
import numpy as np
x = torch.randn(10_000_000, generator=torch.Generator().manual_seed(0))
v = np.random.default_rng(0).standard_normal(2_000_000)
with open(OUT, "w") as f:
    f.write(f"build: OMP_NUM_THREADS={st['omp_env']} torch_threads={st['torch_threads']}\\n")
    f.write(f"build: sum32={st['sum32']} dot={st['dot']}\\n")
    f.write(f"job: torch_threads={torch.get_num_threads()} snakemake.threads={snakemake.threads}\\n")
    f.write(f"job: sum32_equal_build={x.sum().item().hex() == st['sum32']} dot_equal_build={float(v @ v).hex() == st['dot']}\\n")
""",
    build="""
import os
import numpy as np
import torch
x = torch.randn(10_000_000, generator=torch.Generator().manual_seed(0))
v = np.random.default_rng(0).standard_normal(2_000_000)
return {
    "omp_env": os.environ.get("OMP_NUM_THREADS"),
    "torch_threads": torch.get_num_threads(),
    "sum32": x.sum().item().hex(),   # chunked per intra-op thread
    "dot": float(v @ v).hex(),       # BLAS ddot split per thread
}
""",
    extra="    threads: 2\n",
)

case(
    "template_chdir_build",
    "template os.chdir()s into its model folder (loader code with relative paths) and leaves it there; in a fresh job the script continues in that folder and opens the vocab by its relative name",
    """
import os
import stickyinvoc
k = int(snakemake.wildcards.k)
OUT = os.path.abspath(snakemake.output[0])
WD = os.getcwd()
st = stickyinvoc.state(snakemake)
cwd_rel = os.path.relpath(os.getcwd(), WD)
try:
    with open(st["vocab_file"]) as f:
        obs = f"vocab_words={len(f.read().split())}"
except FileNotFoundError:
    obs = "vocab_file not found from the job's cwd"
with open(OUT, "w") as f:
    f.write(f"cwd_relative_to_start={cwd_rel} {obs}\\n")
""",
    build="""
import os
os.makedirs("model_store", exist_ok=True)
with open("model_store/vocab.txt", "w") as f:
    f.write("alpha beta gamma delta\\n")
os.chdir("model_store")
return {"vocab_file": "vocab.txt"}
""",
    header=False,
)

case(
    "template_tempdir_object_in_state",
    "state holds a tempfile.TemporaryDirectory with the unpacked weights; its weakref.finalize (atexit=True) belongs to the template: running 'finalizers marked for exit' at a job's end must not delete it for the next job",
    """
with open(st["weights"]) as f:
    w = [float(x) for x in f.read().split()]
with open(OUT, "w") as f:
    f.write(f"weights={w} sum={sum(w)}\\n")
""",
    build="""
import os, tempfile
tmp = tempfile.TemporaryDirectory(prefix="wfmodel-")
with open(os.path.join(tmp.name, "weights.txt"), "w") as f:
    f.write("0.25 0.5 0.25\\n")
return {"tmp": tmp, "weights": os.path.join(tmp.name, "weights.txt")}
""",
)

case(
    "template_atexit_rmtree",
    "template unpacks into tempfile.mkdtemp() and registers atexit.register(shutil.rmtree, d); running the template's atexit handlers at a job's end (instead of only the script's) deletes the next job's files",
    """
with open(st["labels"]) as f:
    labels = f.read().split()
with open(OUT, "w") as f:
    f.write(f"labels={labels}\\n")
""",
    build="""
import atexit, os, shutil, tempfile
d = tempfile.mkdtemp(prefix="wfscratch-")
with open(os.path.join(d, "labels.txt"), "w") as f:
    f.write("SUPPORTS REFUTES NOT_ENOUGH_INFO\\n")
atexit.register(shutil.rmtree, d, ignore_errors=True)
return {"labels": os.path.join(d, "labels.txt")}
""",
)

case(
    "template_yield_in_with_block",
    "generator template yields inside `with TemporaryDirectory()`: if a forked child's exit closes its copy of the suspended generator (GeneratorExit) or runs the directory's finalizer, the shared directory is removed before the next job",
    """
with open(st["vocab"]) as f:
    words = f.read().split()
with open(OUT, "w") as f:
    f.write(f"vocab={words}\\n")
""",
    build="""
import os, tempfile
with tempfile.TemporaryDirectory(prefix="wfunpack-") as d:
    path = os.path.join(d, "vocab.txt")
    with open(path, "w") as f:
        f.write("a b c d\\n")
    yield {"vocab": path}
""",
)

case(
    "template_server_popen_poll",
    "template starts a helper server with subprocess.Popen and keeps the handle; the script health-checks it with poll(): in a forked child the server is not its child, waitpid fails with ECHILD and Popen reports returncode 0 (dead)",
    """
srv = st["server"]
alive = srv.poll() is None
with open(OUT, "w") as f:
    f.write(f"server_alive={alive} returncode={srv.returncode}\\n")
""",
    build="""
import subprocess, sys
server = subprocess.Popen(
    [sys.executable, "-c", "import sys\\nfor _ in sys.stdin: pass\\n"],  # runs until its stdin closes
    stdin=subprocess.PIPE,
)
try:
    yield {"server": server}
finally:
    server.stdin.close()
    server.wait(timeout=30)
""",
)

case(
    "template_threadpool_in_state",
    "template keeps a warmed-up ThreadPoolExecutor in its state (its threads run: direct mode); emulating the interpreter's exit (concurrent.futures' _python_exit / global shutdown flag) after job 1 would make later submits fail",
    """
try:
    squares = list(st["pool"].map(lambda x: x * x, range(5)))
    obs = f"squares={squares}"
except RuntimeError as e:
    obs = f"pool refused work: {e}"
with open(OUT, "w") as f:
    f.write(obs + "\\n")
""",
    build="""
from concurrent.futures import ThreadPoolExecutor
pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="tok")
pool.submit(sum, [1, 2, 3]).result()   # warm-up: the pool's threads are now running
return {"pool": pool}
""",
)

case(
    "template_excepthook",
    "template installs a crash-report sys.excepthook (writes type, message and traceback depth to $WF_CRASH_REPORT, then chains to sys.__excepthook__); job 2 raises: the hook must run and see only the script's frames",
    """
import os
os.environ["WF_CRASH_REPORT"] = LOG
with open(LOG, "w") as f:
    f.write(f"job {k} starts\\n")

def load_batch(i):
    raise ValueError(f"batch {i} is corrupt")

if k == 2:
    load_batch(k)
with open(OUT, "w") as f:
    f.write("ok\\n")
""",
    build="""
import os, sys, traceback
def crash_report(exc_type, exc, tb):
    path = os.environ.get("WF_CRASH_REPORT")
    if path:
        with open(path, "a") as f:
            f.write(f"crash report: {exc_type.__name__}: {exc}\\n")
            for fr in traceback.extract_tb(tb):
                f.write(f"  at {os.path.basename(fr.filename)}:{fr.lineno} in {fr.name}\\n")
    sys.__excepthook__(exc_type, exc, tb)
sys.excepthook = crash_report
return {"calls": 0}
""",
)

case(
    "joblib_loky_in_template",
    "template warms joblib's reusable loky process pool (sklearn n_jobs idiom); a fresh job's tasks run in pool processes that only that job used, but a long-lived pool carries per-process state (and, forked, may hang)",
    """
import time
from joblib import Parallel, delayed

def tag(job):
    import json  # any installed module serves as per-process scratch space
    prev = getattr(json, "_wf_last_job", None)
    json._wf_last_job = job
    time.sleep(0.05)
    return prev

seen = Parallel(n_jobs=2, backend="loky")(delayed(tag)(k) for _ in range(8))
stale = sorted({v for v in seen if v is not None and v != k})
with open(OUT, "w") as f:
    f.write(f"tags_from_earlier_jobs={stale}\\n")
""",
    build="""
import math
from joblib import Parallel, delayed
Parallel(n_jobs=2, backend="loky")(delayed(math.sqrt)(i) for i in range(4))
return {"calls": 0}
""",
)

# ====================================================================== running from the temporary script
case(
    "stack_depth_at_top_level",
    "provenance code inspects the call stack at top level (len(inspect.stack()), f_back, outermost frame, traceback.print_stack to the log): a fresh script is the outermost frame; worker frames above it would show",
    """
import inspect, os, sys, traceback

def here():
    return len(inspect.stack())

stack = inspect.stack()
outer = stack[-1]
with open(OUT, "w") as f:
    f.write(f"depth={len(stack)} depth_in_helper={here()}\\n")
    f.write(f"f_back_is_none={sys._getframe().f_back is None}\\n")
    f.write(f"outermost={os.path.basename(outer.filename)}:{outer.function}\\n")
    f.write(f"format_stack_entries={len(traceback.format_stack())}\\n")
with open(LOG, "w") as f:
    traceback.print_stack(file=f)
""",
)

case(
    "warning_stacklevel_overshoot",
    "deprecation helper uses warnings.warn(stacklevel=3) and a top-level warn(stacklevel=2): from the script's top level the stacklevel points past the outermost frame, so a fresh run reports 'sys:1'; worker frames would be named instead",
    """
import sys, warnings
sys.stderr = open(LOG, "w")

def old_api(x):
    warnings.warn("old_api() is deprecated; use new_api()", FutureWarning, stacklevel=3)
    return x

old_api(1)

def step(x):
    return old_api(x)

step(2)
warnings.warn("top-level warning reported for the caller", UserWarning, stacklevel=2)
with open(OUT, "w") as f:
    f.write("done\\n")
sys.stderr.flush()
""",
)

case(
    "main_module_identity",
    "script relies on being the real __main__ module: sys.modules['__main__'] is its namespace, __builtins__ is the builtins module, typing.get_type_hints resolves string annotations, doctest.testmod() finds its docstrings, inspect.getfile(cls) works",
    """
import dataclasses, doctest, inspect, os, sys, typing

@dataclasses.dataclass
class Batch:
    '''A batch of claims.

    >>> Batch("b1", 3).size
    3
    '''
    name: "str"
    size: "int"
    parent: "typing.Optional[Batch]" = None

def double(x):
    '''
    >>> double(21)
    42
    '''
    return 2 * x

def attempt(fn):
    try:
        return fn()
    except Exception as e:
        return f"{type(e).__name__}: {e}"

main = sys.modules["__main__"]
with open(OUT, "w") as f:
    f.write(f"main_dict_is_globals={main.__dict__ is globals()}\\n")
    f.write(f"builtins_type={type(__builtins__).__name__}\\n")
    f.write(f"type_hints={attempt(lambda: typing.get_type_hints(Batch))}\\n")
    f.write(f"doctest={attempt(lambda: tuple(doctest.testmod()))}\\n")
    f.write(f"getfile={attempt(lambda: os.path.basename(inspect.getfile(Batch)))}\\n")
    f.write(f"getmodule={attempt(lambda: inspect.getmodule(double).__name__)}\\n")
""",
)

case(
    "thread_and_process_default_names",
    "default names come from per-process counters (Thread-1 (target), Timer Thread-2, ThreadPoolExecutor-0_0, Process-1) and logging's %(processName)s/%(threadName)s/stack_info; a forked worker's counters and stack are not a fresh process's",
    """
import logging, threading
import multiprocessing as mp
from concurrent.futures import ThreadPoolExecutor
names = []

def load_shard():
    names.append(threading.current_thread().name)

t = threading.Thread(target=load_shard)
t.start(); t.join()
timer = threading.Timer(0.01, load_shard)
timer.start(); timer.join()
with ThreadPoolExecutor(max_workers=1) as ex:
    ex.submit(load_shard).result()
p = mp.get_context("fork").Process(target=load_shard)  # named, not started
with open(OUT, "w") as f:
    f.write(f"threads={names}\\n")
    f.write(f"process_obj={p.name} current_process={mp.current_process().name} parent_process={mp.parent_process()}\\n")
    f.write(f"current_thread={threading.current_thread().name} main_thread={threading.main_thread().name}\\n")
lg = logging.getLogger("wf.names")
lg.propagate = False
h = logging.FileHandler(LOG, mode="w")
h.setFormatter(logging.Formatter("%(processName)s|%(threadName)s|%(filename)s:%(lineno)d|%(funcName)s|%(message)s"))
lg.addHandler(h)
lg.setLevel(logging.INFO)
lg.info("job %d", k)

def helper():
    lg.info("inside helper")

helper()
lg.info("with stack", stack_info=True)
h.close()
""",
)

# ====================================================================== a fresh interpreter's exit
case(
    "atexit_registered_before_mp_import",
    "atexit handler is registered BEFORE multiprocessing.util is first imported (Process.start): in a fresh run mp's exit function runs first (LIFO) and joins the child, so the handler sees exitcode 0 after 'child done'",
    """
import atexit, time

def report():
    with open(OUT, "a") as f:
        f.write(f"atexit: child exitcode={p.exitcode}\\n")

atexit.register(report)
with open(OUT, "w") as f:
    f.write("start\\n")
import multiprocessing as mp

def child():
    time.sleep(0.7)
    with open(OUT, "a") as f:
        f.write("child done\\n")

p = mp.get_context("fork").Process(target=child)
p.start()
""",
)

case(
    "atexit_finalize_interleaving",
    "atexit handlers and weakref.finalize share one LIFO exit list (finalize registers its hook at first use): a fresh run prints 'last, finalize, first' and never runs the atexit=False finalizer; a fixed 'atexit then finalize' order differs",
    """
import atexit, weakref

def note(tag):
    with open(OUT, "a") as f:
        f.write(tag + "\\n")

with open(OUT, "w") as f:
    f.write(f"job {k}\\n")
atexit.register(note, "atexit registered first")

class Resource:
    pass

res_a = Resource()
res_b = Resource()
weakref.finalize(res_a, note, "finalize atexit=True")
fin_b = weakref.finalize(res_b, note, "finalize atexit=False")
fin_b.atexit = False
atexit.register(note, "atexit registered last")
""",
)

case(
    "del_uses_builtin_at_exit",
    "a Summary object's __del__ appends to the output via open() at interpreter exit; in a fresh interpreter module teardown has already cleared builtins (NameError, ignored), so no summary line; merely clearing the script's globals would write it",
    """
with open(OUT, "w") as f:
    f.write("rows written\\n")

class Summary:
    def __init__(self):
        self.rows = [k, k + 1]

    def __del__(self):
        with open(OUT, "a") as f:
            f.write(f"summary: {len(self.rows)} rows\\n")

summary = Summary()
""",
)

case(
    "unraisablehook_at_exit",
    "script sets sys.unraisablehook to log failing __del__ cleanups; one object is deleted mid-script (logged), one lives until exit, where a fresh interpreter does not log it through the hook",
    """
import sys

def hook(u):
    with open(OUT, "a") as f:
        f.write(f"unraisable {u.exc_type.__name__}: {u.exc_value}\\n")

sys.unraisablehook = hook
with open(OUT, "w") as f:
    f.write("start\\n")

class Handle:
    def __init__(self, n):
        self.n = n

    def __del__(self):
        raise RuntimeError(f"cleanup {self.n} failed")

h1 = Handle(1)
del h1
h2 = Handle(2)
""",
)

case(
    "atexit_sees_last_exception",
    "an atexit 'final status' hook checks sys.last_value, which a fresh interpreter sets when it prints the uncaught exception; job 2 raises, its log must say crashed with that exception",
    """
import atexit, sys

def final_status():
    last = getattr(sys, "last_value", None)
    with open(LOG, "a") as f:
        if last is None:
            f.write("final status: clean\\n")
        else:
            f.write(f"final status: crashed: {type(last).__name__}: {last}\\n")

atexit.register(final_status)
with open(LOG, "w") as f:
    f.write(f"job {k}\\n")
if k == 2:
    raise ValueError("batch 2 has 0 claims")
with open(OUT, "w") as f:
    f.write("ok\\n")
""",
)

case(
    "helper_module_open_writer",
    "results are written through a helper module that lazily opens the output (64 KiB buffer) and never closes it, and log records sit in a MemoryHandler; a fresh exit flushes both (module teardown, logging.shutdown); clearing only the script's globals does not",
    """
import logging, logging.handlers, os, sys
sys.path.insert(0, os.path.abspath("wfhelpers"))
import wf_resultsink
for i in range(5):
    wf_resultsink.emit(OUT, f"row {k}.{i}\\n")
target = logging.FileHandler(LOG, mode="w")
target.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
buffered = logging.handlers.MemoryHandler(1000, flushLevel=logging.CRITICAL, target=target)
lg = logging.getLogger("wf.sink")
lg.propagate = False
lg.setLevel(logging.INFO)
lg.addHandler(buffered)
for i in range(3):
    lg.info("job %d step %d", k, i)
""",
    files={
        "wfhelpers/wf_resultsink.py": (
            "_fh = None\n"
            "\n"
            "def emit(path, line):\n"
            "    global _fh\n"
            "    if _fh is None:\n"
            "        _fh = open(path, 'w', buffering=1 << 16)\n"
            "    _fh.write(line)\n"
        )
    },
)

# ====================================================================== signals and children (fork-mode specifics)
case(
    "self_signal_handlers",
    "graceful-stop drill: the script sends itself SIGUSR1/SIGTERM (handled by its own handlers, via os.kill and signal.raise_signal) and SIGINT (KeyboardInterrupt, caught); none of these may end or requeue the job",
    """
import os, signal, time
got = []
signal.signal(signal.SIGUSR1, lambda s, f: got.append("USR1"))
signal.signal(signal.SIGTERM, lambda s, f: got.append("TERM"))
os.kill(os.getpid(), signal.SIGUSR1)
os.kill(os.getpid(), signal.SIGTERM)
signal.raise_signal(signal.SIGUSR1)
try:
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(2)
    got.append("no KeyboardInterrupt")
except KeyboardInterrupt:
    got.append("KeyboardInterrupt")
with open(OUT, "w") as f:
    f.write(f"received={got}\\n")
""",
)

case(
    "grandchild_signal_inheritance",
    "what subprocesses inherit: SigIgn/SigBlk of the job and of a grep child, a python grandchild's handlers, return codes (false, exit 3, killed by TERM, os.system), wakeup fd and itimer; a worker's SIG_IGN/mask/SIGCHLD settings would leak",
    """
import os, signal, subprocess, sys

def sig_lines(text):
    return [l.replace("\\t", " ") for l in text.splitlines() if l.startswith(("SigIgn", "SigBlk"))]

own = sig_lines(open("/proc/self/status").read())
child = sig_lines(subprocess.run(["cat", "/proc/self/status"], capture_output=True, text=True).stdout)
probe = (
    "import signal\\n"
    "names = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGPIPE', 'SIGCHLD', 'SIGUSR1']\\n"
    "print([(n, str(signal.getsignal(getattr(signal, n)))) for n in names])\\n"
)
py = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout.strip()
codes = [
    subprocess.run(["false"]).returncode,
    subprocess.run(["sh", "-c", "exit 3"]).returncode,
    subprocess.run(["sh", "-c", "kill -TERM $$"]).returncode,
    os.waitstatus_to_exitcode(os.system("exit 7")),
]
wakeup = signal.set_wakeup_fd(-1)
if wakeup != -1:
    signal.set_wakeup_fd(wakeup)
with open(OUT, "w") as f:
    f.write(f"job: {own}\\n")
    f.write(f"child: {child}\\n")
    f.write(f"python grandchild: {py}\\n")
    f.write(f"return codes: {codes}\\n")
    f.write(f"wakeup_fd_set={wakeup != -1} itimer_real={signal.getitimer(signal.ITIMER_REAL)}\\n")
    f.write(f"blocked={sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, []))}\\n")
""",
)
