"""The fourth NBRewind red team (issue 27, state a cell starts in), as a helper wrote them.

A helper that saw only docs/nbrewind.md and the README (not the code, not the tests) wrote 58
cases: notebooks whose later cells read process state an earlier cell set (library options,
pyplot figures, IPython display settings, warnings, local modules' state, monkeypatched
classes), audited, edited or re-parameterised, repeated and compared with a stock run. Its
first pass (on the state chain and figure replay as first built) found 9 differing and 1
hanging: FIRST_PASS_FAILURES. Each case is the keyword arguments of its ``run_case``:
``cells``, ``params`` (the parameters cell, tagged), ``p_audit``/``p_repeat``, ``edits``
(``[old, new]`` replaces a substring in the one code cell holding it; ``["insert_after",
sub, new]``, ``["delete", sub]``), ``files_setup``, ``files_edit`` (written before the
audit, and after it). tests/integration/nbrewind/test_redteam27d.py runs them.
"""

# ruff: noqa: E501

FIRST_PASS_FAILURES = {
    "c11_warning_helper_module": 'a local module\'s "shown once" warning not replayed',
    "c21_precision_magic_edit": "%precision edited: restored outputs kept the old format",
    "c22_inline_figure_format_edit": "InlineBackend.figure_formats edited: a PNG restored",
    "c23_monkeypatch_lambda_edit": "pd.DataFrame.total = lambda ... edited: restored",
    "c24_monkeypatch_def_edit": "a def assigned to pd.DataFrame edited: restored",
    "c26_lru_cache_helper": "a local module's lru_cache state not seen",
    "c27_helper_class_registry": "a local module's class attribute list mutated",
    "c33_torch_default_dtype": "import torch hung the audit kernel (torch._classes has a relative __file__)",
    "c46_ipython_formatter_for_type_edit": "a for_type printer edited: restored",
    "c69_helper_class_attr_param": "a local module's class attribute rebound from a parameter",
}

CASES = {
    "c01_np_printopts_param": {
        "cells": [
            "import numpy as np\na = np.array([1/3, 2/3, 1.0])",
            "np.set_printoptions(precision=p)",
            "print(a)\na",
        ],
        "p_audit": {"p": 3},
        "p_repeat": {"p": 6},
        "params": {"p": 3},
    },
    "c02_np_seterr_param": {
        "cells": [
            "import numpy as np\ncounts = np.array([4.0, 0.0, 2.0])",
            "np.seterr(divide=mode)",
            "ratio = np.array([1.0, 2.0, 3.0]) / counts\nprint(ratio)",
        ],
        "p_audit": {"mode": "ignore"},
        "p_repeat": {"mode": "warn"},
        "params": {"mode": "ignore"},
    },
    "c03_int_max_str_digits": {
        "cells": [
            "import sys\nsys.set_int_max_str_digits(n)",
            "big = 10**5000\n"
            "try:\n"
            "    print(len(str(big)))\n"
            "except ValueError as e:\n"
            "    print('ValueError', str(e)[:40])",
        ],
        "p_audit": {"n": 10000},
        "p_repeat": {"n": 1000},
        "params": {"n": 10000},
    },
    "c04_pd_max_rows_param": {
        "cells": [
            "import pandas as pd\n"
            "df = pd.DataFrame({'x': range(20), 'y': [i * 0.5 for i in "
            "range(20)]})",
            "pd.set_option('display.max_rows', rows)",
            "print(df)",
            "df.describe()",
        ],
        "p_audit": {"rows": 6},
        "p_repeat": {"rows": 30},
        "params": {"rows": 6},
    },
    "c05_pd_float_format_edit": {
        "cells": [
            "import pandas as pd\ndf = pd.DataFrame({'x': [1/3, 2/3], 'y': [10/7, 1/9]})",
            "pd.options.display.float_format = '{:.2f}'.format",
            "print(df)\ndf",
        ],
        "edits": [("'{:.2f}'", "'{:.4f}'")],
    },
    "c06_decimal_prec": {
        "cells": [
            "from decimal import Decimal, getcontext\nprices = [Decimal('19.99'), Decimal('5.01')]",
            "getcontext().prec = prec",
            "print(sum(prices) / Decimal(7))",
        ],
        "p_audit": {"prec": 5},
        "p_repeat": {"prec": 12},
        "params": {"prec": 5},
    },
    "c07_logging_level_param": {
        "cells": [
            "import logging, sys\n"
            "logging.basicConfig(level=level, "
            "format='%(levelname)s:%(message)s', stream=sys.stdout)\n"
            "log = logging.getLogger('etl')",
            "rows = [1, 2, 3]",
            "log.info('loaded %d rows', len(rows))\nlog.warning('missing values')",
        ],
        "p_audit": {"level": "WARNING"},
        "p_repeat": {"level": "INFO"},
        "params": {"level": "WARNING"},
    },
    "c08_logging_handler_edit": {
        "cells": [
            "import logging, sys\nlog = logging.getLogger('model')\nlog.setLevel(logging.INFO)",
            "h = logging.StreamHandler(sys.stdout)\n"
            "h.setFormatter(logging.Formatter('[%(name)s] "
            "%(message)s'))\n"
            "log.addHandler(h)",
            "log.info('fit done')",
        ],
        "edits": [("'[%(name)s] %(message)s'", "'>> %(message)s'")],
    },
    "c09_warnings_filter_edit": {
        "cells": [
            "import warnings\n"
            "def risky(x):\n"
            "    warnings.warn('deprecated option', FutureWarning)\n"
            "    return x * 2",
            "warnings.filterwarnings('ignore', category=FutureWarning)",
            "print(risky(3))",
        ],
        "edits": [("filterwarnings('ignore'", "filterwarnings('default'")],
    },
    "c10_warning_once_registry": {
        "cells": [
            "import warnings\ndef scale(x):\n    warnings.warn('scale is slow')\n    return x * 10",
            "a = scale(1)\nprint(a)",
            "b = scale(k)\nprint(b)",
        ],
        "p_audit": {"k": 1},
        "p_repeat": {"k": 2},
        "params": {"k": 1},
    },
    "c11_warning_helper_module": {
        "cells": ["import helper", "a = helper.norm(5)\nprint(a)", "b = helper.norm(k)\nprint(b)"],
        "files_setup": {
            "helper.py": "import warnings\n"
            "def norm(x):\n"
            "    warnings.warn('norm: legacy "
            "path', UserWarning)\n"
            "    return x / 10\n"
        },
        "p_audit": {"k": 1},
        "p_repeat": {"k": 2},
        "params": {"k": 1},
    },
    "c12_mpl_title_into_open_fig": {
        "cells": [
            "import matplotlib\n"
            "matplotlib.use('Agg')\n"
            "import matplotlib.pyplot as plt\n"
            "import numpy as np\n"
            "x = np.linspace(0, 1, 20)",
            "fig, ax = plt.subplots(figsize=(4, 3))\nax.plot(x, x**2)",
            "plt.title(f'k={k}')\nax.plot(x, k * x)",
            "plt.savefig('fig.png')\nprint(plt.get_fignums())",
        ],
        "p_audit": {"k": 1},
        "p_repeat": {"k": 2},
        "params": {"k": 1},
    },
    "c13_mpl_restored_fig_savefig_dpi": {
        "cells": [
            "import matplotlib\n"
            "matplotlib.use('Agg')\n"
            "import matplotlib.pyplot as plt\n"
            "import numpy as np\n"
            "x = np.linspace(0, 6, 50)",
            "plt.figure(figsize=(4, 3))\n"
            "plt.plot(x, np.sin(x), label='sin')\n"
            "plt.legend()\n"
            "plt.grid(True)",
            "plt.savefig(f'fig_{dpi}.png', dpi=dpi)\nprint('saved', plt.get_fignums())",
        ],
        "p_audit": {"dpi": 50},
        "p_repeat": {"dpi": 80},
        "params": {"dpi": 50},
    },
    "c14_mpl_current_fig": {
        "cells": [
            "import matplotlib\n"
            "matplotlib.use('Agg')\n"
            "import matplotlib.pyplot as plt\n"
            "import numpy as np",
            "fig1 = plt.figure(1)\nplt.plot([1, 2, 3])",
            "fig2 = plt.figure(2)\nplt.plot([3, 2, 1])",
            "plt.figure(1)",
            "plt.plot([0, k])\nplt.savefig('cur.png')\nprint(plt.gcf().number, plt.get_fignums())",
        ],
        "p_audit": {"k": 1},
        "p_repeat": {"k": 3},
        "params": {"k": 1},
    },
    "c15_mpl_fignum_edit": {
        "cells": [
            "import matplotlib\n"
            "matplotlib.use('Agg')\n"
            "import matplotlib.pyplot as plt\n"
            "import numpy as np",
            "plt.figure()\nplt.plot([1, 2])",
            "plt.figure()\nplt.plot([2, 1])",
            "print(plt.get_fignums(), plt.gcf().number)\nplt.savefig('last.png')",
        ],
        "edits": [
            (
                "plt.figure()\nplt.plot([1, 2])",
                "plt.figure()\nplt.plot([1, 2])\nplt.figure()\nplt.plot([5, 5])",
            )
        ],
    },
    "c16_mpl_close_all_param": {
        "cells": [
            "import matplotlib\n"
            "matplotlib.use('Agg')\n"
            "import matplotlib.pyplot as plt\n"
            "import numpy as np",
            "plt.figure()\nplt.plot([1, 2])",
            "if not keep:\n    plt.close('all')",
            "fig = plt.gcf()\nprint(plt.get_fignums(), len(fig.axes))",
        ],
        "p_audit": {"keep": False},
        "p_repeat": {"keep": True},
        "params": {"keep": False},
    },
    "c17_rcparams_param": {
        "cells": [
            "import matplotlib\n"
            "matplotlib.use('Agg')\n"
            "import matplotlib.pyplot as plt\n"
            "import numpy as np",
            "plt.rcParams['font.size'] = fs\nplt.rcParams['figure.figsize'] = (4, 3)",
            "fig, ax = plt.subplots()\n"
            "ax.plot([1, 2, 3])\n"
            "ax.set_title('t')\n"
            "fig.savefig('rc.png')\n"
            "print(fig.get_size_inches())",
        ],
        "p_audit": {"fs": 8},
        "p_repeat": {"fs": 14},
        "params": {"fs": 8},
    },
    "c18_rc_after_fig_param": {
        "cells": [
            "import matplotlib\n"
            "matplotlib.use('Agg')\n"
            "import matplotlib.pyplot as plt\n"
            "import numpy as np",
            "plt.figure(figsize=(3, 2))\nplt.bar(['a', 'b'], [3, 5])",
            "plt.rcParams['savefig.facecolor'] = color",
            "plt.savefig('bar.png')\nprint('ok')",
        ],
        "p_audit": {"color": "white"},
        "p_repeat": {"color": "lightgray"},
        "params": {"color": "white"},
    },
    "c19_style_use_edit": {
        "cells": [
            "import matplotlib\n"
            "matplotlib.use('Agg')\n"
            "import matplotlib.pyplot as plt\n"
            "import numpy as np",
            "plt.style.use('ggplot')",
            "fig, ax = plt.subplots(figsize=(3, 2))\n"
            "ax.plot([1, 3, 2])\n"
            "fig.savefig('style.png')\n"
            "print(plt.rcParams['axes.facecolor'])",
        ],
        "edits": [("'ggplot'", "'bmh'")],
    },
    "c20_inline_rc_display": {
        "cells": [
            "import matplotlib.pyplot as plt",
            "plt.rcParams['figure.figsize'] = (w, 2)",
            "plt.plot([1, 2, 3])\nplt.show()",
        ],
        "p_audit": {"w": 3},
        "p_repeat": {"w": 5},
        "params": {"w": 3},
    },
    "c21_precision_magic_edit": {
        "cells": ["import math\nx = math.pi", "%precision 3", "x", "[x, 2 * x]"],
        "edits": [("%precision 3", "%precision 5")],
    },
    "c22_inline_figure_format_edit": {
        "cells": [
            "import matplotlib.pyplot as plt",
            "%config InlineBackend.figure_formats = ['png']",
            "plt.plot([1, 2, 3])\nplt.show()",
        ],
        "edits": [("['png']", "['svg']")],
    },
    "c23_monkeypatch_lambda_edit": {
        "cells": [
            "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2], 'b': [3, 4]})",
            "pd.DataFrame.total = lambda self: int(self.sum().sum()) * 2",
            "print(df.total())",
        ],
        "edits": [("* 2", "* 3")],
    },
    "c24_monkeypatch_def_edit": {
        "cells": [
            "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2], 'b': [3, 4]})",
            "def total(self):\n    return int(self.sum().sum())\npd.DataFrame.total = total",
            "print(df.total())",
        ],
        "edits": [("return int(self.sum().sum())", "return int(self.sum().sum()) + 100")],
    },
    "c25_accessor_edit": {
        "cells": [
            "import pandas as pd\ndf = pd.DataFrame({'a': [1, 5, 9], 'b': [3, 4, 8]})",
            "@pd.api.extensions.register_dataframe_accessor('stats')\n"
            "class Stats:\n"
            "    def __init__(self, df):\n"
            "        self._df = df\n"
            "    def spread(self):\n"
            "        return (self._df.max() - self._df.min()).to_dict()",
            "print(df.stats.spread())",
        ],
        "edits": [("self._df.max() - self._df.min()", "self._df.max() - self._df.mean()")],
    },
    "c26_lru_cache_helper": {
        "cells": [
            "import helper",
            "with open('d.txt', 'w') as f:\n    f.write('base')",
            "a = helper.load('d.txt')\nprint(a)",
            "with open('d.txt', 'w') as f:\n    f.write(f'value {p}')",
            "b = helper.load('d.txt')\nprint(p, a, b)",
        ],
        "files_setup": {
            "helper.py": "import functools\n"
            "@functools.lru_cache(maxsize=None)\n"
            "def load(path):\n"
            "    with open(path) as f:\n"
            "        return f.read().strip()\n"
        },
        "p_audit": {"p": 1},
        "p_repeat": {"p": 2},
        "params": {"p": 1},
    },
    "c27_helper_class_registry": {
        "cells": ["import helper", "helper.register('a')", "print(k, helper.count())"],
        "files_setup": {
            "helper.py": "class Registry:\n"
            "    items = []\n"
            "def register(x):\n"
            "    Registry.items.append(x)\n"
            "def count():\n"
            "    return len(Registry.items)\n"
        },
        "p_audit": {"k": 1},
        "p_repeat": {"k": 2},
        "params": {"k": 1},
    },
    "c28_environ_helper_param": {
        "cells": ["import os\nimport helper", "os.environ['MODE'] = mode", "print(helper.mode())"],
        "files_setup": {
            "helper.py": "import os\ndef mode():\n    return os.environ.get('MODE', 'none')\n"
        },
        "p_audit": {"mode": "fast"},
        "p_repeat": {"mode": "slow"},
        "params": {"mode": "fast"},
    },
    "c29_chdir_param": {
        "cells": [
            "import os\nos.makedirs(sub, exist_ok=True)\nos.chdir(sub)",
            "with open('result.txt', 'w') as f:\n    f.write('ok')\nprint(sorted(os.listdir('.')))",
        ],
        "p_audit": {"sub": "run1"},
        "p_repeat": {"sub": "run2"},
        "params": {"sub": "run1"},
    },
    "c30_syspath_param": {
        "cells": ["import sys\nsys.path.insert(0, libdir)", "import mod\nprint(mod.VALUE)"],
        "files_setup": {"lib_a/mod.py": "VALUE = 'A'\n", "lib_b/mod.py": "VALUE = 'B'\n"},
        "p_audit": {"libdir": "lib_a"},
        "p_repeat": {"libdir": "lib_b"},
        "params": {"libdir": "lib_a"},
    },
    "c31_tz_param": {
        "cells": [
            "import os, time\nos.environ['TZ'] = tz\ntime.tzset()",
            "print(time.strftime('%H:%M %Z', time.localtime(0)))",
        ],
        "p_audit": {"tz": "UTC"},
        "p_repeat": {"tz": "Asia/Tokyo"},
        "params": {"tz": "UTC"},
    },
    "c32_umask_param": {
        "cells": [
            "import os\nos.umask(0o077 if strict else 0o022)",
            "if os.path.exists('out.txt'):\n"
            "    os.remove('out.txt')\n"
            "with open('out.txt', 'w') as f:\n"
            "    f.write('data')\n"
            "print(oct(os.stat('out.txt').st_mode & 0o777))",
        ],
        "p_audit": {"strict": False},
        "p_repeat": {"strict": True},
        "params": {"strict": False},
    },
    "c33_torch_default_dtype": {
        "cells": [
            "import torch\ntorch.set_default_dtype(torch.float64 if dbl else torch.float32)",
            "t = torch.tensor([1.5, 2.5])\nprint(t.dtype)",
        ],
        "p_audit": {"dbl": False},
        "p_repeat": {"dbl": True},
        "params": {"dbl": False},
    },
    "c34_helper_sets_printopts_edit_file": {
        "cells": ["import numpy as np\na = np.array([1/3, 2/7])", "import helper", "print(a)"],
        "files_edit": {"helper.py": "import numpy as np\nnp.set_printoptions(precision=5)\n"},
        "files_setup": {"helper.py": "import numpy as np\nnp.set_printoptions(precision=2)\n"},
    },
    "c35_csv_field_size_limit": {
        "cells": [
            "import csv\ncsv.field_size_limit(limit)",
            "with open('long.csv', 'w') as f:\n    f.write('id,text\\n1,' + 'x' * 500 + '\\n')",
            "try:\n"
            "    rows = list(csv.reader(open('long.csv')))\n"
            "    print(len(rows), len(rows[1][1]))\n"
            "except csv.Error as e:\n"
            "    print('csv.Error', e)",
        ],
        "p_audit": {"limit": 1000000},
        "p_repeat": {"limit": 100},
        "params": {"limit": 1000000},
    },
    "c36_mpl_dates_restored_savefig": {
        "cells": [
            "import matplotlib\n"
            "matplotlib.use('Agg')\n"
            "import matplotlib.pyplot as plt\n"
            "import numpy as np\n"
            "import pandas as pd\n"
            "s = pd.Series([1, 3, 2, 5], "
            "index=pd.date_range('2024-01-01', periods=4))",
            "fig, ax = plt.subplots(figsize=(4, 3))\n"
            "ax.plot(s.index, s.values)\n"
            "fig.autofmt_xdate()",
            "plt.savefig(f'dates_{dpi}.png', dpi=dpi)\nprint('saved')",
        ],
        "p_audit": {"dpi": 50},
        "p_repeat": {"dpi": 70},
        "params": {"dpi": 50},
    },
    "c37_mpl_funcformatter_savefig": {
        "cells": [
            "import matplotlib\n"
            "matplotlib.use('Agg')\n"
            "import matplotlib.pyplot as plt\n"
            "import numpy as np\n"
            "from matplotlib.ticker import FuncFormatter",
            "fig, ax = plt.subplots(figsize=(4, 3))\n"
            "ax.plot([0, 1000, 2000], [1, 2, 3])\n"
            "ax.xaxis.set_major_formatter(FuncFormatter(lambda v, "
            "pos: f'{v/1000:.1f}k'))",
            "plt.savefig(f'fmt_{dpi}.png', dpi=dpi)\nprint('saved')",
        ],
        "p_audit": {"dpi": 50},
        "p_repeat": {"dpi": 70},
        "params": {"dpi": 50},
    },
    "c38_mpl_imshow_colorbar": {
        "cells": [
            "import matplotlib\n"
            "matplotlib.use('Agg')\n"
            "import matplotlib.pyplot as plt\n"
            "import numpy as np\n"
            "img = np.arange(100).reshape(10, 10)",
            "fig, ax = plt.subplots(figsize=(4, 3))\n"
            "im = ax.imshow(img, cmap='viridis')\n"
            "fig.colorbar(im, ax=ax)\n"
            "fig.tight_layout()",
            "plt.savefig(f'img_{dpi}.png', dpi=dpi)\nprint('saved')",
        ],
        "p_audit": {"dpi": 50},
        "p_repeat": {"dpi": 70},
        "params": {"dpi": 50},
    },
    "c39_mpl_sca": {
        "cells": [
            "import matplotlib\n"
            "matplotlib.use('Agg')\n"
            "import matplotlib.pyplot as plt\n"
            "import numpy as np",
            "fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(4, 2))",
            "plt.sca(ax1)",
            "plt.plot([1, k])\nplt.savefig('sca.png')\nprint(len(ax1.lines), len(ax2.lines))",
        ],
        "p_audit": {"k": 1},
        "p_repeat": {"k": 4},
        "params": {"k": 1},
    },
    "c40_cond_printopts_on": {
        "cells": [
            "import numpy as np\na = np.array([1/3, 2/3])",
            "if short:\n    np.set_printoptions(precision=2)",
            "print(a)",
        ],
        "p_audit": {"short": False},
        "p_repeat": {"short": True},
        "params": {"short": False},
    },
    "c41_cond_printopts_off": {
        "cells": [
            "import numpy as np\na = np.array([1/3, 2/3])",
            "if short:\n    np.set_printoptions(precision=2)",
            "print(a)",
        ],
        "p_audit": {"short": True},
        "p_repeat": {"short": False},
        "params": {"short": True},
    },
    "c42_cond_extra_figure": {
        "cells": [
            "import matplotlib\n"
            "matplotlib.use('Agg')\n"
            "import matplotlib.pyplot as plt\n"
            "import numpy as np",
            "plt.figure(figsize=(3, 2))\nplt.plot([1, 2, 3])",
            "if extra:\n    plt.figure(figsize=(3, 2))\n    plt.plot([3, 1, 3])",
            "plt.savefig('out.png')\nprint(plt.get_fignums())",
        ],
        "p_audit": {"extra": False},
        "p_repeat": {"extra": True},
        "params": {"extra": False},
    },
    "c43_rcparams_via_function_edit": {
        "cells": [
            "import matplotlib\n"
            "matplotlib.use('Agg')\n"
            "import matplotlib.pyplot as plt\n"
            "import numpy as np",
            "def set_theme():\n"
            "    plt.rcParams['lines.linewidth'] = 1.0\n"
            "    plt.rcParams['axes.grid'] = False",
            "set_theme()",
            "fig, ax = plt.subplots(figsize=(3, 2))\n"
            "ax.plot([1, 3, 2])\n"
            "fig.savefig('theme.png')\n"
            "print(plt.rcParams['lines.linewidth'])",
        ],
        "edits": [("'lines.linewidth'] = 1.0", "'lines.linewidth'] = 3.0")],
    },
    "c44_math_module_attr_edit": {
        "cells": [
            "import json\ndata = {'x': 1.23456789}",
            "json.encoder.c_make_encoder = None\n"
            "json.encoder.FLOAT_REPR = lambda f: format(f, '.2f')",
            "print(json.dumps(data))",
        ],
        "edits": [("'.2f'", "'.4f'")],
    },
    "c45_np_printopts_threshold_df_edit": {
        "cells": [
            "import numpy as np\nimport pandas as pd\nv = np.arange(2000)",
            "np.set_printoptions(threshold=5, edgeitems=2)",
            "print(v)\nprint(pd.Series([1.123456, 2.0]).values)",
        ],
        "edits": [("threshold=5, edgeitems=2", "threshold=5, edgeitems=4")],
    },
    "c46_ipython_formatter_for_type_edit": {
        "cells": [
            "scores = {'a': 0.123456, 'b': 0.987654}\nbest = max(scores.values())",
            "ip = get_ipython()\n"
            "ip.display_formatter.formatters['text/plain'].for_type(float, "
            "lambda x, p, cycle: p.text(f'{x:.2f}'))",
            "best",
        ],
        "edits": [("f'{x:.2f}'", "f'{x:.4f}'")],
    },
    "c47_pprint_magic_edit": {
        "cells": [
            "cfg = {'model': 'ridge', 'alphas': [0.1, 1.0, 10.0], "
            "'features': ['age', 'income', 'score', 'region', 'tenure', "
            "'visits']}",
            "%pprint on",
            "cfg",
        ],
        "edits": [("%pprint on", "%pprint off")],
    },
    "c48_helper_dict_cache": {
        "cells": [
            "import helper",
            "with open('d.txt', 'w') as f:\n    f.write('base')",
            "a = helper.load('d.txt')\nprint(a)",
            "with open('d.txt', 'w') as f:\n    f.write(f'value {p}')",
            "b = helper.load('d.txt')\nprint(p, a, b)",
        ],
        "files_setup": {
            "helper.py": "_CACHE = {}\n"
            "def load(path):\n"
            "    if path not in _CACHE:\n"
            "        with open(path) as f:\n"
            "            _CACHE[path] = "
            "f.read().strip()\n"
            "    return _CACHE[path]\n"
        },
        "p_audit": {"p": 1},
        "p_repeat": {"p": 2},
        "params": {"p": 1},
    },
    "c49_notebook_lru_cache": {
        "cells": [
            "import functools\n"
            "@functools.lru_cache(maxsize=None)\n"
            "def load(path):\n"
            "    with open(path) as f:\n"
            "        return f.read().strip()",
            "with open('d.txt', 'w') as f:\n    f.write('base')",
            "a = load('d.txt')\nprint(a)",
            "with open('d.txt', 'w') as f:\n    f.write(f'value {p}')",
            "b = load('d.txt')\nprint(p, a, b)",
        ],
        "p_audit": {"p": 1},
        "p_repeat": {"p": 2},
        "params": {"p": 1},
    },
    "c50_module_func_monkeypatch_edit": {
        "cells": [
            "import textwrap\nnotes = 'a fairly long sentence describing the experiment setup'",
            "textwrap.shorten = lambda s, width, **kw: s[:width] + '~'",
            "print(textwrap.shorten(notes, width=12))",
        ],
        "edits": [("s[:width] + '~'", "s[:width] + '...'")],
    },
    "c51_helper_instance_counter": {
        "cells": ["import helper", "helper.counter.inc()", "print(k, helper.counter.n)"],
        "files_setup": {
            "helper.py": "class Counter:\n"
            "    def __init__(self):\n"
            "        self.n = 0\n"
            "    def inc(self):\n"
            "        self.n += 1\n"
            "counter = Counter()\n"
        },
        "p_audit": {"k": 1},
        "p_repeat": {"k": 2},
        "params": {"k": 1},
    },
    "c52_helper_warn_registry_edit_caller": {
        "cells": [
            "import helper\nraw = [1.0, float('nan'), 3.0]",
            "first = helper.clean(raw)\nprint(first)",
            "second = helper.clean(raw + [4.0])\nprint(second)",
        ],
        "edits": [("raw + [4.0]", "raw + [5.0]")],
        "files_setup": {
            "helper.py": "import warnings\n"
            "def clean(xs):\n"
            "    "
            "warnings.warn('clean(): "
            "dropping NaNs', "
            "RuntimeWarning)\n"
            "    return [x for x in xs "
            "if x == x]\n"
        },
    },
    "c53_class_attr_pandas_option_like": {
        "cells": [
            "import pandas as pd\ndf = pd.DataFrame({'a': [1, 2], 'b': [3, 4]})",
            "def total(self):\n    return int(self.sum().sum())\npd.DataFrame.total = total",
            "def total(self):\n    return int(self.sum().sum()) * k\npd.DataFrame.total = total",
            "print(df.total())",
        ],
        "p_audit": {"k": 2},
        "p_repeat": {"k": 3},
        "params": {"k": 2},
    },
    "c54_mpl_rc_context_param_fig_restored": {
        "cells": [
            "import matplotlib\n"
            "matplotlib.use('Agg')\n"
            "import matplotlib.pyplot as plt\n"
            "import numpy as np",
            "plt.rcParams['lines.linewidth'] = lw",
            "plt.figure(figsize=(3, 2))\nplt.plot([1, 3, 2])",
            "plt.savefig('lw.png')\nprint('done')",
        ],
        "p_audit": {"lw": 1},
        "p_repeat": {"lw": 4},
        "params": {"lw": 1},
    },
    "c63_insert_printopts_cell": {
        "cells": ["import numpy as np\na = np.array([1/3, 2/3])", "b = a * 2", "print(a, b)"],
        "edits": [("insert_after", "b = a * 2", "np.set_printoptions(precision=3)")],
    },
    "c64_delete_printopts_cell": {
        "cells": [
            "import numpy as np\na = np.array([1/3, 2/3])",
            "np.set_printoptions(precision=3)",
            "print(a)",
        ],
        "edits": [("delete", "np.set_printoptions(precision=3)")],
    },
    "c68_delete_figure_cell": {
        "cells": [
            "import matplotlib\n"
            "matplotlib.use('Agg')\n"
            "import matplotlib.pyplot as plt\n"
            "import numpy as np",
            "plt.figure(figsize=(3, 2))\nplt.plot([1, 2])",
            "plt.figure(figsize=(3, 2))\nplt.plot([2, 1])",
            "print(plt.get_fignums())\nplt.savefig('last.png')",
        ],
        "edits": [("delete", "plt.plot([1, 2])")],
    },
    "c69_helper_class_attr_param": {
        "cells": [
            "import helper",
            "helper.Model.scale = k",
            "m = helper.Model()\nprint(m.predict(3))",
        ],
        "files_setup": {
            "helper.py": "class Model:\n"
            "    scale = 1\n"
            "    def predict(self, x):\n"
            "        return x * self.scale\n"
        },
        "p_audit": {"k": 2},
        "p_repeat": {"k": 5},
        "params": {"k": 2},
    },
}
