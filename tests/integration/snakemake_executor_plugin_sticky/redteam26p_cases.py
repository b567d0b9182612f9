"""The process-state red team's cases (issue 26, this session): a helper that saw only README.md
and docs/checkpoints.md wrote them and their harness (launch_a: how site A starts, launch_bc:
sites B and C; keys env, unset_env, flags, pyflags, umask, nice, nofile, stack, cores).
Kept as written, less its run notes; see test_process_state_redteam.py."""

# ruff: noqa
# fmt: off
# launch keys: env, unset_env, flags, pyflags, umask, nice, nofile, stack, cores

def _one(pre, body, extra_rules=""):
    return (pre + '\n\nrule all:\n    input: "out/x.txt"\n\n'
            'rule make:\n    output: "out/x.txt"\n    run:\n' + body + "\n" + extra_rules)

DF_BODY = ('        import pandas as pd\n'
           '        with open(output[0], "w") as f:\n'
           '            f.write(str(pd.DataFrame({"a": [1.23456789, 2.5]})))\n')
NP_BODY = ('        import numpy as np\n'
           '        with open(output[0], "w") as f:\n'
           '            f.write(str(np.array([1.23456789, 2.5])))\n')

CASES = {
 "pd_precision_edit": dict(
    desc="pd.set_option('display.precision') in Snakefile, value edited",
    files={"Snakefile": _one('import pandas as pd\npd.set_option("display.precision", 2)', DF_BODY)},
    edits=[("Snakefile", '"display.precision", 2', '"display.precision", 4')],
    changes_output=True),
 "pd_float_format_strmethod_edit": dict(
    desc="pd display.float_format = '{:.2f}'.format (bound builtin method), edited to .4f",
    files={"Snakefile": _one('import pandas as pd\npd.set_option("display.float_format", "{:.2f}".format)', DF_BODY)},
    edits=[("Snakefile", '{:.2f}', '{:.4f}')],
    changes_output=True),
 "np_formatter_lambda_edit": dict(
    desc="np.set_printoptions(formatter={'float': lambda}) in Snakefile, lambda body edited",
    files={"Snakefile": _one('import numpy as np\nnp.set_printoptions(formatter={"float": lambda x: f"{x:.2f}"})', NP_BODY)},
    edits=[("Snakefile", 'x:.2f', 'x:.4f')],
    changes_output=True),
 "callable_settings_noedit": dict(
    desc="pd float_format = '{:.2f}'.format and np formatter lambda, nothing edited (must restore)",
    files={"Snakefile": _one('import pandas as pd, numpy as np\npd.set_option("display.float_format", "{:.2f}".format)\n'
                             'np.set_printoptions(formatter={"float": lambda x: f"{x:.2f}"})',
                             DF_BODY.replace('import pandas as pd', 'import pandas as pd, numpy as np') +
                             '        with open(output[0], "a") as f:\n            f.write(str(np.array([1.5])))\n')},
    edits=[], changes_output=False),
 "decimal_defaultcontext_edit": dict(
    desc="decimal.DefaultContext.prec set in Snakefile (what new threads inherit), edited",
    files={"Snakefile": _one('import decimal\ndecimal.DefaultContext.prec = 5',
        '        import decimal\n        with open(output[0], "w") as f:\n'
        '            f.write(str(decimal.Decimal(1) / decimal.Decimal(7)))\n')},
    edits=[("Snakefile", "prec = 5", "prec = 9")],
    changes_output=True),
 "decimal_getcontext_edit": dict(
    desc="decimal.getcontext().prec set in Snakefile (documented example), edited",
    files={"Snakefile": _one('import decimal\ndecimal.getcontext().prec = 5',
        '        import decimal\n        with open(output[0], "w") as f:\n'
        '            f.write(str(decimal.Decimal(1) / decimal.Decimal(7)))\n')},
    edits=[("Snakefile", "prec = 5", "prec = 9")],
    changes_output=True),
 "csv_register_dialect_edit": dict(
    desc="csv.register_dialect('semi', delimiter=';') in Snakefile; run block writes with dialect='semi'; delimiter edited",
    files={"Snakefile": _one('import csv\ncsv.register_dialect("semi", delimiter=";")',
        '        import csv\n        with open(output[0], "w", newline="") as f:\n'
        '            csv.writer(f, dialect="semi").writerow(["a", "b", "c"])\n')},
    edits=[("Snakefile", 'delimiter=";"', 'delimiter="|"')],
    changes_output=True),
 "pickle_default_protocol_edit": dict(
    desc="pickle.DEFAULT_PROTOCOL = 2 in Snakefile; run block writes pickle.dumps(...); edited to 3",
    files={"Snakefile": _one('import pickle\npickle.DEFAULT_PROTOCOL = 2',
        '        import pickle\n        with open(output[0], "wb") as f:\n'
        '            f.write(pickle.dumps({"k": [1, 2, 3]}))\n')},
    edits=[("Snakefile", "DEFAULT_PROTOCOL = 2", "DEFAULT_PROTOCOL = 3")],
    changes_output=True),
 "mimetypes_add_type_edit": dict(
    desc="mimetypes.add_type in Snakefile; run block writes guess_type; type edited",
    files={"Snakefile": _one('import mimetypes\nmimetypes.add_type("text/x-foo", ".foo")',
        '        import mimetypes\n        with open(output[0], "w") as f:\n'
        '            f.write(str(mimetypes.guess_type("a.foo")))\n')},
    edits=[("Snakefile", 'text/x-foo', 'text/x-bar')],
    changes_output=True),
 "logging_logger_level_edit": dict(
    desc="logging.getLogger('mylib').setLevel(DEBUG) in Snakefile; run block logs to its output via a FileHandler; level edited to WARNING",
    files={"Snakefile": _one('import logging\nlogging.getLogger("mylib").setLevel(logging.DEBUG)',
        '        import logging\n        lg = logging.getLogger("mylib")\n'
        '        fh = logging.FileHandler(output[0])\n        lg.addHandler(fh)\n'
        '        lg.debug("debug"); lg.info("info"); lg.warning("warning")\n'
        '        lg.removeHandler(fh); fh.close()\n')},
    edits=[("Snakefile", 'setLevel(logging.DEBUG)', 'setLevel(logging.WARNING)')],
    changes_output=True),
 "int_max_str_digits_edit": dict(
    desc="sys.set_int_max_str_digits(5000) in Snakefile; run block converts a 4501-digit int; edited to 4000",
    files={"Snakefile": _one('import sys\nsys.set_int_max_str_digits(5000)',
        '        with open(output[0], "w") as f:\n'
        '            try:\n                f.write("len=%d" % len(str(10 ** 4500)))\n'
        '            except ValueError:\n                f.write("refused")\n')},
    edits=[("Snakefile", "5000", "4000")],
    changes_output=True),
 "warnings_filter_include_edit": dict(
    desc="warnings.simplefilter('error', UserWarning) in an include:d file; edited to 'ignore'",
    files={"Snakefile": _one('include: "rules/settings.smk"',
        '        import warnings\n        with open(output[0], "w") as f:\n'
        '            try:\n                warnings.warn("w", UserWarning)\n                f.write("no error")\n'
        '            except UserWarning:\n                f.write("error")\n'),
           "rules/settings.smk": 'import warnings\nwarnings.simplefilter("error", UserWarning)\n'},
    edits=[("rules/settings.smk", '"error"', '"ignore"')],
    changes_output=True),
 "np_printoptions_local_module_edit": dict(
    desc="Snakefile imports local wfsettings.py that calls np.set_printoptions(precision=2) at import; run block does not reach it; module edited",
    files={"Snakefile": _one('import wfsettings', NP_BODY),
           "wfsettings.py": 'import numpy as np\nnp.set_printoptions(precision=2)\n'},
    edits=[("wfsettings.py", "precision=2", "precision=5")],
    changes_output=True),
 "np_printoptions_module_edit": dict(
    desc="module m: snakefile sub.smk sets np.set_printoptions(precision=2) at top level; use rule * from m; edited",
    files={"Snakefile": 'module m:\n    snakefile: "sub.smk"\n\nuse rule * from m\n',
           "sub.smk": 'import numpy as np\nnp.set_printoptions(precision=2)\n\n'
                      'rule all:\n    input: "out/x.txt"\n\nrule make:\n    output: "out/x.txt"\n    run:\n' + NP_BODY},
    edits=[("sub.smk", "precision=2", "precision=5")],
    changes_output=True),
 "random_seed_via_local_helper_edit": dict(
    desc="random.seed(1) in Snakefile; run block calls helper.draw() in a local module that calls random.random(); seed edited",
    files={"Snakefile": _one('import random\nrandom.seed(1)\nimport helper',
        '        with open(output[0], "w") as f:\n            f.write(repr(helper.draw()))\n'),
           "helper.py": 'import random\n\ndef draw():\n    return random.random()\n'},
    edits=[("Snakefile", "random.seed(1)", "random.seed(2)")],
    changes_output=True),
 "random_seed_from_import_edit": dict(
    desc="from random import random as rnd; random.seed(1) in Snakefile; run block calls rnd(); seed edited",
    files={"Snakefile": _one('import random as _r\nfrom random import random as rnd\n_r.seed(1)',
        '        with open(output[0], "w") as f:\n            f.write(repr(rnd()))\n')},
    edits=[("Snakefile", "_r.seed(1)", "_r.seed(2)")],
    changes_output=True),
 "np_seed_pandas_sample_edit": dict(
    desc="np.random.seed(1) in Snakefile; run block uses DataFrame.sample(3) (global numpy RNG, no np.random reference); seed edited",
    files={"Snakefile": _one('import numpy as np\nnp.random.seed(1)',
        '        import pandas as pd\n        with open(output[0], "w") as f:\n'
        '            f.write(str(pd.DataFrame({"a": range(20)}).sample(3)))\n')},
    edits=[("Snakefile", "seed(1)", "seed(2)")],
    changes_output=True),
 "onstart_pd_option_edit": dict(
    desc="pd.set_option('display.precision') inside onstart:; value edited",
    files={"Snakefile": _one('import pandas as pd\nonstart:\n    pd.set_option("display.precision", 2)', DF_BODY)},
    edits=[("Snakefile", '"display.precision", 2', '"display.precision", 4')],
    changes_output=True),
 "onstart_umask_add": dict(
    desc="edit adds onstart: os.umask(0o077) (run block writes a file)",
    files={"Snakefile": _one('import os', '        with open(output[0], "w") as f:\n            f.write("x")\n')},
    edits=[("Snakefile", 'import os', 'import os\nonstart:\n    os.umask(0o077)')],
    changes_output=True),
 "leak_between_run_blocks": dict(
    desc="rule r1 (priority) sets pd option inside its run block, leaking into the process; independent r2 prints a DataFrame; edit removes the leak from r1 (r1's output unchanged); --cores 1",
    files={"Snakefile": 'rule all:\n    input: "out/a.txt", "out/b.txt"\n\n'
        'rule r1:\n    output: "out/a.txt"\n    priority: 10\n    run:\n'
        '        import pandas as pd\n        pd.set_option("display.precision", 2)\n'
        '        with open(output[0], "w") as f:\n            f.write("a")\n\n'
        'rule r2:\n    output: "out/b.txt"\n    run:\n' + DF_BODY},
    edits=[("Snakefile", '        pd.set_option("display.precision", 2)\n', '        pass\n')],
    launch_a={"cores": 1}, launch_bc={"cores": 1},
    changes_output=True),
 "umask_snakefile_add": dict(
    desc="edit adds os.umask(0o077) at top of Snakefile; run + shell rules write files",
    files={"Snakefile": 'import os\n\nrule all:\n    input: "out/x.txt", "out/y.txt"\n\n'
        'rule make:\n    output: "out/x.txt"\n    run:\n        with open(output[0], "w") as f:\n            f.write("x")\n\n'
        'rule sh:\n    output: "out/y.txt"\n    shell: "echo y > {output}"\n'},
    edits=[("Snakefile", 'import os\n', 'import os\nos.umask(0o077)\n')],
    changes_output=True),
 "umask_launch_002": dict(
    desc="site A launched under umask 022, B/C under umask 002 (directory() output too)",
    files={"Snakefile": 'rule all:\n    input: "out/x.txt", "out/d"\n\n'
        'rule make:\n    output: "out/x.txt"\n    run:\n        with open(output[0], "w") as f:\n            f.write("x")\n\n'
        'rule d:\n    output: directory("out/d")\n    run:\n        import os\n        os.makedirs(output[0] + "/sub")\n'
        '        open(output[0] + "/sub/f.txt", "w").write("f")\n'},
    edits=[], launch_a={"umask": 0o022}, launch_bc={"umask": 0o002},
    changes_output=True),
 "cli_flags_verbose_noedit": dict(
    desc="B/C add --verbose -p --keep-going --show-failed-logs; nothing edited (must restore)",
    files={"Snakefile": _one('import pandas as pd, numpy as np, warnings\npd.set_option("display.precision", 3)', DF_BODY)},
    edits=[], launch_a={}, launch_bc={"flags": ["--verbose", "-p", "--keep-going", "--show-failed-logs"]},
    changes_output=False),
 "cli_flags_quiet_noedit": dict(
    desc="B/C add --quiet all --printshellcmds and drop --nocolor; nothing edited (must restore)",
    files={"Snakefile": _one('import pandas as pd, numpy as np, warnings\npd.set_option("display.precision", 3)', DF_BODY)},
    edits=[], launch_a={}, launch_bc={"flags": ["--quiet", "all", "--printshellcmds"], "no_nocolor": True},
    changes_output=False),
 "launch_limits_noedit": dict(
    desc="B/C launched with nice 5, RLIMIT_NOFILE 512, RLIMIT_STACK 4 MiB; nothing edited (must restore)",
    files={"Snakefile": _one('import pandas as pd, numpy as np\npd.set_option("display.precision", 3)', DF_BODY)},
    edits=[], launch_a={}, launch_bc={"nice": 5, "nofile": 512, "stack": 4 * 1024 * 1024},
    changes_output=False),
 "launch_warnings_env_noedit": dict(
    desc="B/C launched with python -W ignore::DeprecationWarning, PYTHONWARNINGS=ignore::FutureWarning, PYTHONHASHSEED=7, LC_ALL=C.UTF-8, TZ=Asia/Tokyo; job does not depend (must restore)",
    files={"Snakefile": _one('import pandas as pd, numpy as np, warnings\npd.set_option("display.precision", 3)', DF_BODY)},
    edits=[], launch_a={},
    launch_bc={"pyflags": ["-W", "ignore::DeprecationWarning"], "env": {"PYTHONWARNINGS": "ignore::FutureWarning",
               "PYTHONHASHSEED": "7", "LC_ALL": "C.UTF-8", "TZ": "Asia/Tokyo"}},
    changes_output=False),
 "launch_hashseed_set_order": dict(
    desc="run block writes ','.join of a set of strings; A under PYTHONHASHSEED=1, B/C under PYTHONHASHSEED=2 (documented: launch env not covered)",
    files={"Snakefile": _one('', '        with open(output[0], "w") as f:\n'
        '            f.write(",".join({"apple", "banana", "cherry", "date", "elder", "fig"}))\n')},
    edits=[], launch_a={"env": {"PYTHONHASHSEED": "1"}}, launch_bc={"env": {"PYTHONHASHSEED": "2"}},
    changes_output=True),
 "launch_pythonwarnings_dependent": dict(
    desc="run block output depends on whether UserWarning is an error; A under PYTHONWARNINGS=error::UserWarning, B/C without (documented: launch not keyed)",
    files={"Snakefile": _one('', '        import warnings\n        with open(output[0], "w") as f:\n'
            '            try:\n                warnings.warn("w", UserWarning)\n                f.write("no error")\n'
            '            except UserWarning:\n                f.write("error")\n')},
    edits=[], launch_a={"env": {"PYTHONWARNINGS": "error::UserWarning"}}, launch_bc={},
    changes_output=True),
}

CASES.update({
 "pd_float_format_snakefile_func_edit": dict(
    desc="pd display.float_format = fmt, a Snakefile function; fmt's body edited .2f -> .4f",
    files={"Snakefile": _one('import pandas as pd\ndef fmt(x):\n    return f"{x:.2f}"\npd.set_option("display.float_format", fmt)', DF_BODY)},
    edits=[("Snakefile", 'x:.2f', 'x:.4f')],
    changes_output=True),
 "pd_float_format_local_module_func_edit": dict(
    desc="pd display.float_format = wfsettings.fmt (function in a local module); wfsettings.py edited",
    files={"Snakefile": _one('import pandas as pd, wfsettings\npd.set_option("display.float_format", wfsettings.fmt)', DF_BODY),
           "wfsettings.py": 'def fmt(x):\n    return f"{x:.2f}"\n'},
    edits=[("wfsettings.py", 'x:.2f', 'x:.4f')],
    changes_output=True),
 "np_seed_from_import_rand_edit": dict(
    desc="from numpy.random import rand; np.random.seed(1) in Snakefile; run block calls rand(); seed edited",
    files={"Snakefile": _one('import numpy as np\nfrom numpy.random import rand\nnp.random.seed(1)',
        '        with open(output[0], "w") as f:\n            f.write(repr(float(rand())))\n')},
    edits=[("Snakefile", "seed(1)", "seed(2)")],
    changes_output=True),
 "launch_W_only_noedit": dict(
    desc="B/C launched with python -W ignore::DeprecationWarning only; job does not warn (must restore)",
    files={"Snakefile": _one('import pandas as pd', DF_BODY)},
    edits=[], launch_a={}, launch_bc={"pyflags": ["-W", "ignore::DeprecationWarning"]},
    changes_output=False),
 "launch_pythonwarnings_only_noedit": dict(
    desc="B/C launched with PYTHONWARNINGS=ignore::FutureWarning only (must restore)",
    files={"Snakefile": _one('import pandas as pd', DF_BODY)},
    edits=[], launch_a={}, launch_bc={"env": {"PYTHONWARNINGS": "ignore::FutureWarning"}},
    changes_output=False),
 "launch_hashseed_locale_tz_noedit": dict(
    desc="B/C launched with PYTHONHASHSEED=7, LC_ALL=C.UTF-8, TZ=Asia/Tokyo (must restore)",
    files={"Snakefile": _one('import pandas as pd', DF_BODY)},
    edits=[], launch_a={}, launch_bc={"env": {"PYTHONHASHSEED": "7", "LC_ALL": "C.UTF-8", "TZ": "Asia/Tokyo"}},
    changes_output=False),
 "launch_Xdev_noedit": dict(
    desc="B/C launched with python -X dev (dev mode: warnings default filters, faulthandler) (must restore)",
    files={"Snakefile": _one('import pandas as pd', DF_BODY)},
    edits=[], launch_a={}, launch_bc={"pyflags": ["-X", "dev"]},
    changes_output=False),
 "launch_intmaxstrdigits_dependent": dict(
    desc="run block converts a 4501-digit int; A under PYTHONINTMAXSTRDIGITS=5000, B/C default 4300",
    files={"Snakefile": _one('', '        with open(output[0], "w") as f:\n'
        '            try:\n                f.write("len=%d" % len(str(10 ** 4500)))\n'
        '            except ValueError:\n                f.write("refused")\n')},
    edits=[], launch_a={"env": {"PYTHONINTMAXSTRDIGITS": "5000"}}, launch_bc={},
    changes_output=True),
})
