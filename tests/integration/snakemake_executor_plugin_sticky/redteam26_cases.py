"""The independent red team's cases for checkpoint keys (issue 26), kept as written.

A helper that saw only README.md and docs/checkpoints.md (not the code, not the tests) wrote
these workflows and edits, each one a real workflow could undergo, and ran them through a
harness (site A with a store; site B, a fresh copy with the edit, with the store; site C, the
same copy, without): ``test_checkpoint_redteam.py`` is that harness. First pass, on the key
of this issue's first commit (74b00b4: the job as executed, before the red team): of 90
cases, 26 restored stale outputs and 7 reran for nothing (FIRST_PASS_STALE,
FIRST_PASS_UNNEEDED below). The helper added 2 cases after its first pass; its final pass
(on a tree still being edited) left 1 stale (run_random_seed: the Snakefile's random.seed)
and 7 unnecessary reruns, answered after it.

``CASES[name]``: ``desc``, ``files`` (the workflow at site A), ``edits`` ((file, old, new)
applied at site B), ``changes_output`` (False: nothing a job does changes: it must be
restored), optional ``cores_a``/``cores_b``, ``modes``/``edit_modes``.
"""

# ruff: noqa: E501

import textwrap


def D(s):
    return textwrap.dedent(s).lstrip("\n")


ALL = 'rule all:\n    input: "out/r.txt"\n\n'


# a script that writes one value
def W(expr, pre=""):
    return (
        D(pre)
        + 'with open(snakemake.output[0], "w") as fh:\n    fh.write(str('
        + expr
        + ') + "\\n")\n'
    )


SCRIPT_RULE = D("""
    rule r:
        output: "out/r.txt"
        script: "scripts/r.py"
""")

RUN_WRITE = D("""
    rule r:
        output: "out/r.txt"
        run:
            with open(output[0], "w") as fh:
                fh.write(str(EXPR) + "\\n")
""")


def run_rule(expr):
    return RUN_WRITE.replace("EXPR", expr)


CASES = {}

# ---------------------------------------------------------------- params: canonical text
CASES["param_dict_order"] = dict(
    desc="reorder keys of a dict param; canonical text sorts dicts, but the script writes them in order",
    files={
        "Snakefile": ALL
        + D("""
            rule r:
                output: "out/r.txt"
                params: columns={"sample": "str", "depth": "int", "gc": "float"}
                script: "scripts/r.py"
        """),
        "scripts/r.py": W('",".join(snakemake.params.columns)'),
    },
    edits=[
        (
            "Snakefile",
            '{"sample": "str", "depth": "int", "gc": "float"}',
            '{"sample": "str", "gc": "float", "depth": "int"}',
        )
    ],
    changes_output=True,
)

CASES["param_int_vs_float"] = dict(
    desc="param lr=1 -> lr=1.0; a canonical text that normalises numbers would miss it",
    files={
        "Snakefile": ALL
        + D("""
            rule r:
                output: "out/r.txt"
                params: lr=1
                script: "scripts/r.py"
        """),
        "scripts/r.py": W('f"--lr {snakemake.params.lr}"'),
    },
    edits=[("Snakefile", "lr=1", "lr=1.0")],
    changes_output=True,
)

CASES["param_bool_vs_int"] = dict(
    desc="param verbose=1 -> verbose=True (equal in Python, 1 == True)",
    files={
        "Snakefile": ALL
        + D("""
            rule r:
                output: "out/r.txt"
                params: verbose=1
                script: "scripts/r.py"
        """),
        "scripts/r.py": W('f"verbose={snakemake.params.verbose}"'),
    },
    edits=[("Snakefile", "verbose=1", "verbose=True")],
    changes_output=True,
)

CASES["param_str_vs_int"] = dict(
    desc='param n="3" -> n=3; a JSON-ish or str() canonical text could collapse them',
    files={
        "Snakefile": ALL
        + D("""
            rule r:
                output: "out/r.txt"
                params: n="3"
                script: "scripts/r.py"
        """),
        "scripts/r.py": W("snakemake.params.n * 2"),
    },
    edits=[("Snakefile", 'n="3"', "n=3")],
    changes_output=True,
)

CASES["param_tuple_vs_list"] = dict(
    desc="param dims=(2, 3) -> [2, 3]; JSON canonicalisation makes both lists",
    files={
        "Snakefile": ALL
        + D("""
            rule r:
                output: "out/r.txt"
                params: dims=(2, 3)
                script: "scripts/r.py"
        """),
        "scripts/r.py": W("snakemake.params.dims"),
    },
    edits=[("Snakefile", "dims=(2, 3)", "dims=[2, 3]")],
    changes_output=True,
)

CASES["param_dataclass_repr_false"] = dict(
    desc="param is a dataclass whose seed field has repr=False: its repr is stable but lossy",
    files={
        "Snakefile": D("""
            from dataclasses import dataclass, field

            @dataclass(frozen=True)
            class Opts:
                name: str
                seed: int = field(default=0, repr=False)

        """)
        + ALL
        + D("""
            rule r:
                output: "out/r.txt"
                params: opts=Opts("train", seed=1)
                run:
                    with open(output[0], "w") as fh:
                        fh.write(f"{params.opts.name} {params.opts.seed}\\n")
        """),
    },
    edits=[("Snakefile", 'Opts("train", seed=1)', 'Opts("train", seed=2)')],
    changes_output=True,
)

CASES["param_class_object"] = dict(
    desc="param holds a class (repr '<class ...Scale>', no address); the class attribute changes",
    files={
        "Snakefile": D("""
            class Scale:
                FACTOR = 2

        """)
        + ALL
        + D("""
            rule r:
                output: "out/r.txt"
                params: scaler=[Scale]
                run:
                    with open(output[0], "w") as fh:
                        fh.write(str(params.scaler[0].FACTOR * 10) + "\\n")
        """),
    },
    edits=[("Snakefile", "FACTOR = 2", "FACTOR = 3")],
    changes_output=True,
)

CASES["param_lossy_repr"] = dict(
    desc="param object with a user __repr__ that omits a field the job uses",
    files={
        "Snakefile": D("""
            class Model:
                def __init__(self, name, depth):
                    self.name, self.depth = name, depth
                def __repr__(self):
                    return f"Model({self.name!r})"

        """)
        + ALL
        + D("""
            rule r:
                output: "out/r.txt"
                params: model=Model("resnet", 18)
                run:
                    with open(output[0], "w") as fh:
                        fh.write(f"{params.model.name}{params.model.depth}\\n")
        """),
    },
    edits=[("Snakefile", 'Model("resnet", 18)', 'Model("resnet", 34)')],
    changes_output=True,
)

CASES["param_numpy_in_dict"] = dict(
    desc="numpy array nested in a dict param; numpy's repr rounds to 8 digits",
    files={
        "Snakefile": "import numpy as np\n\n"
        + ALL
        + D("""
            rule r:
                output: "out/r.txt"
                params: weights={"a": np.array([1.0000000001, 2.0])}
                script: "scripts/r.py"
        """),
        "scripts/r.py": W('repr(float(snakemake.params.weights["a"][0]))'),
    },
    edits=[("Snakefile", "1.0000000001", "1.0000000002")],
    changes_output=True,
)

CASES["param_pandas_df"] = dict(
    desc="pandas DataFrame param; its repr shows 6 significant digits",
    files={
        "Snakefile": "import pandas as pd\n\n"
        + ALL
        + D("""
            rule r:
                output: "out/r.txt"
                params: table=pd.DataFrame({"x": [1.00000001, 2.0]})
                script: "scripts/r.py"
        """),
        "scripts/r.py": W('repr(float(snakemake.params.table["x"][0]))'),
    },
    edits=[("Snakefile", "1.00000001", "1.00000002")],
    changes_output=True,
)

# ---------------------------------------------------------------- config
CASES["config_mapping_order"] = dict(
    desc="reorder a YAML mapping in config; the script lists samples in config order",
    files={
        "Snakefile": 'configfile: "config.yaml"\n\n' + ALL + SCRIPT_RULE,
        "config.yaml": "samples:\n  beta: b.fq\n  alpha: a.fq\n  gamma: g.fq\n",
        "scripts/r.py": W('"\\n".join(snakemake.config["samples"])'),
    },
    edits=[("config.yaml", "  beta: b.fq\n  alpha: a.fq\n", "  alpha: a.fq\n  beta: b.fq\n")],
    changes_output=True,
)

CASES["run_config_order"] = dict(
    desc="reorder a YAML mapping in config; a run: block (whole config) lists it in order",
    files={
        "Snakefile": 'configfile: "config.yaml"\n\n'
        + ALL
        + D("""
            rule r:
                output: "out/r.txt"
                run:
                    with open(output[0], "w") as fh:
                        fh.write(",".join(config["samples"]) + "\\n")
        """),
        "config.yaml": "samples:\n  beta: b.fq\n  alpha: a.fq\n",
    },
    edits=[("config.yaml", "  beta: b.fq\n  alpha: a.fq\n", "  alpha: a.fq\n  beta: b.fq\n")],
    changes_output=True,
)

CASES["script_config_alias"] = dict(
    desc="script aliases cfg = snakemake.config and reads cfg['greeting']",
    files={
        "Snakefile": 'configfile: "config.yaml"\n\n' + ALL + SCRIPT_RULE,
        "config.yaml": "greeting: hello\nother: x\n",
        "scripts/r.py": W('cfg["greeting"]', "cfg = snakemake.config\n"),
    },
    edits=[("config.yaml", "greeting: hello", "greeting: hi")],
    changes_output=True,
)

CASES["script_config_getattr"] = dict(
    desc="script reads getattr(snakemake, 'config')['greeting']",
    files={
        "Snakefile": 'configfile: "config.yaml"\n\n' + ALL + SCRIPT_RULE,
        "config.yaml": "greeting: hello\nother: x\n",
        "scripts/r.py": W('getattr(snakemake, "config")["greeting"]'),
    },
    edits=[("config.yaml", "greeting: hello", "greeting: hi")],
    changes_output=True,
)

CASES["script_config_key_variable"] = dict(
    desc="script reads snakemake.config[KEY] with KEY a module constant (not a literal)",
    files={
        "Snakefile": 'configfile: "config.yaml"\n\n' + ALL + SCRIPT_RULE,
        "config.yaml": "greeting: hello\nother: x\n",
        "scripts/r.py": W("snakemake.config[KEY]", 'KEY = "greeting"\n'),
    },
    edits=[("config.yaml", "greeting: hello", "greeting: hi")],
    changes_output=True,
)

CASES["script_config_in_function"] = dict(
    desc="script reads snakemake.config[name] inside a helper function called with a literal",
    files={
        "Snakefile": 'configfile: "config.yaml"\n\n' + ALL + SCRIPT_RULE,
        "config.yaml": "greeting: hello\nother: x\n",
        "scripts/r.py": W(
            'setting("greeting")',
            D("""
            def setting(name):
                return snakemake.config[name]
        """),
        ),
    },
    edits=[("config.yaml", "greeting: hello", "greeting: hi")],
    changes_output=True,
)

CASES["script_config_items"] = dict(
    desc="script dumps every config item via snakemake.config.items()",
    files={
        "Snakefile": 'configfile: "config.yaml"\n\n' + ALL + SCRIPT_RULE,
        "config.yaml": "greeting: hello\nother: x\n",
        "scripts/r.py": W('";".join(f"{k}={v}" for k, v in sorted(snakemake.config.items()))'),
    },
    edits=[("config.yaml", "other: x", "other: y")],
    changes_output=True,
)

CASES["config_setdefault"] = dict(
    desc="Snakefile fills a default with config.setdefault(); the default changes, the config file does not",
    files={
        "Snakefile": 'configfile: "config.yaml"\nconfig.setdefault("greeting", "hello")\n\n'
        + ALL
        + SCRIPT_RULE,
        "config.yaml": "other: x\n",
        "scripts/r.py": W('snakemake.config["greeting"]'),
    },
    edits=[
        (
            "Snakefile",
            'config.setdefault("greeting", "hello")',
            'config.setdefault("greeting", "hi")',
        )
    ],
    changes_output=True,
)

CASES["template_config"] = dict(
    desc="jinja2 template_engine rule renders config (the table lists only code:template-engine and the template)",
    files={
        "Snakefile": 'configfile: "config.yaml"\n\n'
        + ALL
        + D("""
            rule r:
                input: "templates/t.j2"
                output: "out/r.txt"
                template_engine: "jinja2"
        """),
        "config.yaml": "greeting: hello\n",
        "templates/t.j2": "greeting={{ config['greeting'] }}\n",
    },
    edits=[("config.yaml", "greeting: hello", "greeting: hi")],
    changes_output=True,
)

CASES["bash_script_config"] = dict(
    desc="a bash script: reads ${snakemake_config[greeting]}",
    files={
        "Snakefile": 'configfile: "config.yaml"\n\n'
        + ALL
        + D("""
            rule r:
                output: "out/r.txt"
                script: "scripts/r.sh"
        """),
        "config.yaml": "greeting: hello\nother: x\n",
        "scripts/r.sh": 'echo "${snakemake_config[greeting]}" > "${snakemake_output[0]}"\n',
    },
    edits=[("config.yaml", "greeting: hello", "greeting: hi")],
    changes_output=True,
)

CASES["module_config_script"] = dict(
    desc="module with config: config['sub']; the module's script reads snakemake.config['k'] (sub.k changes)",
    files={
        "Snakefile": 'configfile: "config.yaml"\n\n'
        + ALL
        + D("""
            module sub:
                snakefile: "sub/Snakefile"
                config: config["sub"]

            use rule * from sub as sub_*
        """),
        "config.yaml": "k: top\nsub:\n  k: inner\n",
        "sub/Snakefile": D("""
            rule r:
                output: "out/r.txt"
                script: "scripts/r.py"
        """),
        "sub/scripts/r.py": W('snakemake.config["k"]'),
    },
    edits=[("config.yaml", "k: inner", "k: inner2")],
    changes_output=True,
)

# ---------------------------------------------------------------- scripts and their code
CASES["script_syspath_lib"] = dict(
    desc="script puts lib/ on sys.path at run time and imports mylib from there",
    files={
        "Snakefile": ALL + SCRIPT_RULE,
        "scripts/r.py": W(
            "mylib.label()",
            D("""
            import os, sys
            sys.path.insert(0, os.path.join(os.getcwd(), "lib"))
            import mylib
        """),
        ),
        "lib/mylib.py": 'def label():\n    return "v1"\n',
    },
    edits=[("lib/mylib.py", '"v1"', '"v2"')],
    changes_output=True,
)

CASES["script_spec_from_file"] = dict(
    desc="script loads lib/steps.py with importlib.util.spec_from_file_location (not in the computed-import list)",
    files={
        "Snakefile": ALL + SCRIPT_RULE,
        "scripts/r.py": W(
            "steps.label()",
            D("""
            import importlib.util
            spec = importlib.util.spec_from_file_location("steps", "lib/steps.py")
            steps = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(steps)
        """),
        ),
        "lib/steps.py": 'def label():\n    return "v1"\n',
    },
    edits=[("lib/steps.py", '"v1"', '"v2"')],
    changes_output=True,
)

CASES["script_exec_file"] = dict(
    desc="script runs exec(open('lib/steps.py').read())",
    files={
        "Snakefile": ALL + SCRIPT_RULE,
        "scripts/r.py": W(
            'ns["label"]()',
            D("""
            ns = {}
            exec(open("lib/steps.py").read(), ns)
        """),
        ),
        "lib/steps.py": 'def label():\n    return "v1"\n',
    },
    edits=[("lib/steps.py", '"v1"', '"v2"')],
    changes_output=True,
)

CASES["script_namespace_package"] = dict(
    desc="script imports from a namespace package (scripts/nspkg/, no __init__.py)",
    files={
        "Snakefile": ALL + SCRIPT_RULE,
        "scripts/r.py": W("label()", "from nspkg.core import label\n"),
        "scripts/nspkg/core.py": 'def label():\n    return "v1"\n',
    },
    edits=[("scripts/nspkg/core.py", '"v1"', '"v2"')],
    changes_output=True,
)

CASES["script_relative_import_pkg"] = dict(
    desc="script imports a local package whose __init__ re-exports from .core",
    files={
        "Snakefile": ALL + SCRIPT_RULE,
        "scripts/r.py": W("label()", "from pkg import label\n"),
        "scripts/pkg/__init__.py": "from .core import label\n",
        "scripts/pkg/core.py": "from .consts import V\n\ndef label():\n    return V\n",
        "scripts/pkg/consts.py": 'V = "v1"\n',
    },
    edits=[("scripts/pkg/consts.py", '"v1"', '"v2"')],
    changes_output=True,
)

CASES["script_shell_prefix_env"] = dict(
    desc="shell.prefix exports MODE; a script: job runs through shell() too, but shell-settings are keyed only for run:",
    files={
        "Snakefile": 'shell.prefix("export MODE=fast; ")\n\n' + ALL + SCRIPT_RULE,
        "scripts/r.py": W('os.environ.get("MODE")', "import os\n"),
    },
    edits=[("Snakefile", "MODE=fast", "MODE=slow")],
    changes_output=True,
)

CASES["run_random_seed"] = dict(
    desc="Snakefile calls random.seed(42) at parse time; run: draws from random (stdlib counts by name)",
    files={
        "Snakefile": "import random\nrandom.seed(42)\n\n"
        + ALL
        + run_rule("random.randint(0, 10**9)"),
    },
    edits=[("Snakefile", "random.seed(42)", "random.seed(43)")],
    changes_output=True,
)

CASES["run_pandas_option"] = dict(
    desc="Snakefile sets pd.set_option('display.precision', 3); run: writes a DataFrame's to_string()",
    files={
        "Snakefile": 'import pandas as pd\npd.set_option("display.precision", 3)\n\n'
        + ALL
        + run_rule('pd.DataFrame({"x": [1 / 3]}).to_string()'),
    },
    edits=[("Snakefile", '"display.precision", 3', '"display.precision", 5')],
    changes_output=True,
)

CASES["bash_script_source"] = dict(
    desc="a bash script: sources a helper scripts/lib.sh (a 'local module' of a bash script)",
    files={
        "Snakefile": ALL
        + D("""
            rule r:
                output: "out/r.txt"
                script: "scripts/r.sh"
        """),
        "scripts/r.sh": 'source scripts/lib.sh\nlabel > "${snakemake_output[0]}"\n',
        "scripts/lib.sh": "label() { echo v1; }\n",
    },
    edits=[("scripts/lib.sh", "v1", "v2")],
    changes_output=True,
)

CASES["wrapper_local_edit"] = dict(
    desc="local wrapper (file:) wrapper.py body changes",
    files={
        "Snakefile": ALL
        + D("""
            rule r:
                output: "out/r.txt"
                wrapper: "file:wrappers/label"
        """),
        "wrappers/label/wrapper.py": W('"v1"'),
        "wrappers/label/environment.yaml": "channels: [conda-forge]\ndependencies: []\n",
    },
    edits=[("wrappers/label/wrapper.py", '"v1"', '"v2"')],
    changes_output=True,
)

# ---------------------------------------------------------------- shell / environment (documented limits)
CASES["shell_undeclared_script"] = dict(
    desc="shell: runs python scripts/gen.py, a file not declared as input (documented: undeclared reads)",
    files={
        "Snakefile": ALL
        + D("""
            rule r:
                output: "out/r.txt"
                shell: "python scripts/gen.py > {output}"
        """),
        "scripts/gen.py": 'print("v1")\n',
    },
    edits=[("scripts/gen.py", '"v1"', '"v2"')],
    changes_output=True,
)

CASES["snakefile_environ"] = dict(
    desc="Snakefile sets os.environ['STYLE'] at parse time; the shell command reads $STYLE",
    files={
        "Snakefile": 'import os\nos.environ["STYLE"] = "loud"\n\n'
        + ALL
        + D("""
            rule r:
                output: "out/r.txt"
                shell: "echo $STYLE > {output}"
        """),
    },
    edits=[("Snakefile", '"loud"', '"quiet"')],
    changes_output=True,
)

# ---------------------------------------------------------------- run: reach
CASES["run_global_dict_order"] = dict(
    desc="reorder a Snakefile global dict that a run: block iterates",
    files={
        "Snakefile": 'ORDER = {"beta": 1, "alpha": 2}\n\n'
        + ALL
        + D("""
            rule r:
                output: "out/r.txt"
                run:
                    with open(output[0], "w") as fh:
                        fh.write(",".join(ORDER) + "\\n")
        """),
    },
    edits=[("Snakefile", '{"beta": 1, "alpha": 2}', '{"alpha": 2, "beta": 1}')],
    changes_output=True,
)

CASES["run_globals_lookup"] = dict(
    desc="run: picks a function by name from globals(); names-based reach cannot see fmt_upper",
    files={
        "Snakefile": D("""
            def fmt_upper(s):
                return s.upper()

            def fmt_lower(s):
                return s.lower()

        """)
        + ALL
        + D("""
            rule r:
                output: "out/r.txt"
                params: style="upper"
                run:
                    f = globals()["fmt_" + params.style]
                    with open(output[0], "w") as fh:
                        fh.write(f("Hello") + "\\n")
        """),
    },
    edits=[("Snakefile", "return s.upper()", 'return s.upper() + "!"')],
    changes_output=True,
)

CASES["run_eval_string"] = dict(
    desc="run: eval()s an expression string naming a Snakefile function",
    files={
        "Snakefile": 'def banner():\n    return "v1"\n\nEXPR = "banner()"\n\n'
        + ALL
        + run_rule("eval(EXPR)"),
    },
    edits=[("Snakefile", 'return "v1"', 'return "v2"')],
    changes_output=True,
)

CASES["run_exec_file"] = dict(
    desc="run: exec()s lib/steps.py read as text",
    files={
        "Snakefile": ALL
        + D("""
            rule r:
                output: "out/r.txt"
                run:
                    ns = {}
                    exec(open("lib/steps.py").read(), ns)
                    with open(output[0], "w") as fh:
                        fh.write(ns["label"]() + "\\n")
        """),
        "lib/steps.py": 'def label():\n    return "v1"\n',
    },
    edits=[("lib/steps.py", '"v1"', '"v2"')],
    changes_output=True,
)

CASES["run_global_lossy_repr"] = dict(
    desc="run: reaches a global object whose user __repr__ omits the field the job uses",
    files={
        "Snakefile": D("""
            class Settings:
                def __init__(self, name, depth):
                    self.name, self.depth = name, depth
                def __repr__(self):
                    return f"Settings({self.name!r})"

            SETTINGS = Settings("base", 3)

        """)
        + ALL
        + run_rule("SETTINGS.depth"),
    },
    edits=[("Snakefile", 'Settings("base", 3)', 'Settings("base", 4)')],
    changes_output=True,
)

CASES["run_sys_modules_lookup"] = dict(
    desc="run: takes a local module from sys.modules by name (imported in the Snakefile under another name)",
    files={
        "Snakefile": "import helpers7 as _h\nimport sys\n\n"
        + ALL
        + run_rule('sys.modules["helpers7"].label()'),
        "helpers7.py": 'def label():\n    return "v1"\n',
    },
    edits=[("helpers7.py", '"v1"', '"v2"')],
    changes_output=True,
)

CASES["run_class_inheritance"] = dict(
    desc="run: uses Ruler().unit(), a method inherited from Base (not in Ruler.__dict__)",
    files={
        "Snakefile": D("""
            class Base:
                def unit(self):
                    return "cm"

            class Ruler(Base):
                pass

        """)
        + ALL
        + run_rule("Ruler().unit()"),
    },
    edits=[("Snakefile", 'return "cm"', 'return "mm"')],
    changes_output=True,
)

CASES["run_lru_cache"] = dict(
    desc="run: calls a functools.lru_cache-decorated function (a C wrapper; body behind __wrapped__)",
    files={
        "Snakefile": D("""
            import functools

            @functools.lru_cache(maxsize=None)
            def table():
                return "v1"

        """)
        + ALL
        + run_rule("table()"),
    },
    edits=[("Snakefile", 'return "v1"', 'return "v2"')],
    changes_output=True,
)

CASES["run_kwonly_default"] = dict(
    desc="run: calls a function whose keyword-only default (__kwdefaults__) changes",
    files={
        "Snakefile": 'def tag(s, *, suffix="!"):\n    return s + suffix\n\n'
        + ALL
        + run_rule('tag("hello")'),
    },
    edits=[("Snakefile", 'suffix="!"', 'suffix="?"')],
    changes_output=True,
)

CASES["run_function_attribute"] = dict(
    desc="run: calls a function that reads an attribute set on itself (label.prefix)",
    files={
        "Snakefile": 'def label():\n    return label.prefix + "x"\n\nlabel.prefix = "p1-"\n\n'
        + ALL
        + run_rule("label()"),
    },
    edits=[("Snakefile", '"p1-"', '"p2-"')],
    changes_output=True,
)

CASES["run_workflow_cores"] = dict(
    desc="run: writes workflow.cores; --cores differs between sites, the job's threads do not",
    files={"Snakefile": ALL + run_rule("workflow.cores")},
    edits=[],
    cores_a=2,
    cores_b=1,
    changes_output=True,
)

CASES["run_singledispatch"] = dict(
    desc="run: calls a functools.singledispatch function; the int implementation lives in its registry",
    files={
        "Snakefile": D("""
            from functools import singledispatch

            @singledispatch
            def render(x):
                return "obj"

            @render.register
            def _(x: int):
                return "int:" + str(x)

        """)
        + ALL
        + run_rule("render(3)"),
    },
    edits=[("Snakefile", '"int:"', '"integer:"')],
    changes_output=True,
)

CASES["run_methodcaller"] = dict(
    desc="run: uses a global operator.methodcaller('upper') -> 'lower'",
    files={
        "Snakefile": 'import operator\nNORMALIZE = operator.methodcaller("upper")\n\n'
        + ALL
        + run_rule('NORMALIZE("Hello")'),
    },
    edits=[("Snakefile", 'methodcaller("upper")', 'methodcaller("lower")')],
    changes_output=True,
)

CASES["run_module_monkeypatch"] = dict(
    desc="Snakefile sets helpers.FACTOR = 3 on a local module; the module counts by file content only",
    files={
        "Snakefile": "import helpers\nhelpers.FACTOR = 3\n\n" + ALL + run_rule("helpers.scaled(2)"),
        "helpers.py": "FACTOR = 1\n\ndef scaled(x):\n    return x * FACTOR\n",
    },
    edits=[("Snakefile", "helpers.FACTOR = 3", "helpers.FACTOR = 4")],
    changes_output=True,
)

CASES["run_module_settings_update"] = dict(
    desc="Snakefile mutates a dict in a local module (helpers.SETTINGS.update); run: uses helpers.fmt",
    files={
        "Snakefile": 'import helpers\nhelpers.SETTINGS.update(unit="mm")\n\n'
        + ALL
        + run_rule("helpers.fmt(5)"),
        "helpers.py": 'SETTINGS = {"unit": "cm"}\n\ndef fmt(x):\n    return str(x) + SETTINGS["unit"]\n',
    },
    edits=[("Snakefile", 'unit="mm"', 'unit="in"')],
    changes_output=True,
)

CASES["run_import_inside_function"] = dict(
    desc="run: calls a Snakefile function that imports a local module inside its body",
    files={
        "Snakefile": "def value():\n    import helpers2\n    return helpers2.VALUE\n\n"
        + ALL
        + run_rule("value()"),
        "helpers2.py": 'VALUE = "v1"\n',
    },
    edits=[("helpers2.py", '"v1"', '"v2"')],
    changes_output=True,
)

CASES["run_from_import_star"] = dict(
    desc="Snakefile does from helpers3 import *; run: calls compute(), which calls a second local module",
    files={
        "Snakefile": "from helpers3 import *\n\n" + ALL + run_rule("compute()"),
        "helpers3.py": "import helpers4\n\ndef compute():\n    return helpers4.base() * 2\n",
        "helpers4.py": "def base():\n    return 21\n",
    },
    edits=[("helpers4.py", "return 21", "return 22")],
    changes_output=True,
)

CASES["run_lambda_dict"] = dict(
    desc="run: looks up a lambda in a global dict by a param",
    files={
        "Snakefile": 'OPS = {"up": lambda s: s.upper(), "low": lambda s: s.lower()}\n\n'
        + ALL
        + D("""
            rule r:
                output: "out/r.txt"
                params: op="up"
                run:
                    with open(output[0], "w") as fh:
                        fh.write(OPS[params.op]("Hello") + "\\n")
        """),
    },
    edits=[("Snakefile", "lambda s: s.upper()", 'lambda s: s.upper() + "!"')],
    changes_output=True,
)

CASES["run_property"] = dict(
    desc="run: reads a @property of a Snakefile class",
    files={
        "Snakefile": D("""
            class Ruler:
                @property
                def unit(self):
                    return "cm"

        """)
        + ALL
        + run_rule("Ruler().unit"),
    },
    edits=[("Snakefile", 'return "cm"', 'return "mm"')],
    changes_output=True,
)

CASES["run_staticmethod"] = dict(
    desc="run: calls a @staticmethod of a Snakefile class",
    files={
        "Snakefile": D("""
            class Fmt:
                @staticmethod
                def tag():
                    return "v1"

        """)
        + ALL
        + run_rule("Fmt.tag()"),
    },
    edits=[("Snakefile", 'return "v1"', 'return "v2"')],
    changes_output=True,
)

CASES["run_dataclass_default_factory"] = dict(
    desc="run: builds a dataclass whose field default_factory lambda changes",
    files={
        "Snakefile": D("""
            from dataclasses import dataclass, field

            @dataclass
            class Cfg:
                items: list = field(default_factory=lambda: ["a", "b"])

        """)
        + ALL
        + run_rule('",".join(Cfg().items)'),
    },
    edits=[("Snakefile", '["a", "b"]', '["a", "c"]')],
    changes_output=True,
)

CASES["run_enum_method"] = dict(
    desc="run: calls a method of an Enum member",
    files={
        "Snakefile": D("""
            from enum import Enum

            class Unit(Enum):
                CM = "cm"

                def label(self):
                    return "unit:" + self.value

        """)
        + ALL
        + run_rule("Unit.CM.label()"),
    },
    edits=[("Snakefile", '"unit:"', '"u:"')],
    changes_output=True,
)

CASES["run_decorator_arg"] = dict(
    desc="run: calls a function wrapped by a parametrised decorator; the decorator argument changes",
    files={
        "Snakefile": D("""
            import functools

            def suffix(s):
                def deco(f):
                    @functools.wraps(f)
                    def w(*a):
                        return f(*a) + s
                    return w
                return deco

            @suffix("!")
            def hello():
                return "hello"

        """)
        + ALL
        + run_rule("hello()"),
    },
    edits=[("Snakefile", '@suffix("!")', '@suffix("?")')],
    changes_output=True,
)

CASES["run_global_statement"] = dict(
    desc="run: calls configure(), which sets a global via `global`, then reads it through another function",
    files={
        "Snakefile": D("""
            MODE = "a"

            def configure():
                global MODE
                MODE = "b"

            def mode():
                return MODE

        """)
        + ALL
        + D("""
            rule r:
                output: "out/r.txt"
                run:
                    configure()
                    with open(output[0], "w") as fh:
                        fh.write(mode() + "\\n")
        """),
    },
    edits=[("Snakefile", 'MODE = "b"', 'MODE = "c"')],
    changes_output=True,
)

CASES["run_nested_def_comprehension"] = dict(
    desc="run: calls a helper whose nested function's comprehension holds the changed constant",
    files={
        "Snakefile": D("""
            def outer(xs):
                def inner():
                    return [x + "-v1" for x in xs]
                return ",".join(inner())

        """)
        + ALL
        + run_rule('outer(["a", "b"])'),
    },
    edits=[("Snakefile", '"-v1"', '"-v2"')],
    changes_output=True,
)

CASES["run_included_global"] = dict(
    desc="run: calls a helper defined in an included file; a global in that file changes",
    files={
        "Snakefile": 'include: "rules/common.smk"\n\n' + ALL + run_rule('decorate("x")'),
        "rules/common.smk": 'SUFFIX = "-v1"\n\ndef decorate(s):\n    return s + SUFFIX\n',
    },
    edits=[("rules/common.smk", '"-v1"', '"-v2"')],
    changes_output=True,
)

CASES["run_closure_factory"] = dict(
    desc="run: calls a closure built by a factory at parse time; the factory argument changes",
    files={
        "Snakefile": D("""
            def make(prefix):
                def f(s):
                    return prefix + s
                return f

            TAG = make("v1-")

        """)
        + ALL
        + run_rule('TAG("x")'),
    },
    edits=[("Snakefile", 'make("v1-")', 'make("v2-")')],
    changes_output=True,
)

# ---------------------------------------------------------------- inputs
CASES["input_dir_link_outside"] = dict(
    desc="input directory holds a symlink to a file outside it; that file's content changes (key: link target only)",
    files={
        "Snakefile": D("""
            import os
            if not os.path.lexists("data/ref/current.txt"):
                os.symlink("../versions/current.txt", "data/ref/current.txt")

        """)
        + ALL
        + D("""
            rule r:
                input: "data/ref"
                output: "out/r.txt"
                shell: "cat {input}/current.txt > {output}"
        """),
        "data/ref/README.txt": "reference\n",
        "data/versions/current.txt": "v1\n",
    },
    edits=[("data/versions/current.txt", "v1", "v2")],
    changes_output=True,
)

CASES["input_link_to_dir_content"] = dict(
    desc="input is a symlink to a directory; a file inside the target directory changes",
    files={
        "Snakefile": D("""
            import os
            if not os.path.lexists("data/current"):
                os.symlink("releases/r1", "data/current")

        """)
        + ALL
        + D("""
            rule r:
                input: "data/current"
                output: "out/r.txt"
                shell: "cat {input}/table.txt > {output}"
        """),
        "data/releases/r1/table.txt": "v1\n",
    },
    edits=[("data/releases/r1/table.txt", "v1", "v2")],
    changes_output=True,
)

CASES["input_symlink_retarget"] = dict(
    desc="input symlink retargeted to another file with identical content; the job records readlink",
    files={
        "Snakefile": D("""
            import os
            TARGET = "v1.txt"
            if os.path.islink("data/current") and os.readlink("data/current") != TARGET:
                os.remove("data/current")
            if not os.path.lexists("data/current"):
                os.symlink(TARGET, "data/current")

        """)
        + ALL
        + D("""
            rule r:
                input: "data/current"
                output: "out/r.txt"
                shell: "readlink {input} > {output}"
        """),
        "data/v1.txt": "same\n",
        "data/v2.txt": "same\n",
    },
    edits=[("Snakefile", 'TARGET = "v1.txt"', 'TARGET = "v2.txt"')],
    changes_output=True,
)

CASES["input_mode_exec"] = dict(
    desc="input loses its exec bit; the job tests -x",
    files={
        "Snakefile": ALL
        + D("""
            rule r:
                input: "data/tool.sh"
                output: "out/r.txt"
                shell: "if [ -x {input} ]; then echo exec; else echo plain; fi > {output}"
        """),
        "data/tool.sh": "echo hi\n",
    },
    modes={"data/tool.sh": 0o755},
    edits=[],
    edit_modes={"data/tool.sh": 0o644},
    changes_output=True,
)

# ---------------------------------------------------------------- outputs
CASES["output_protected_added"] = dict(
    desc="output wrapped in protected(): a fresh run leaves it read-only (flags 'not in the key')",
    files={
        "Snakefile": ALL
        + D("""
            rule r:
                output: "out/r.txt"
                shell: "echo v1 > {output}"
        """),
    },
    edits=[("Snakefile", 'output: "out/r.txt"', 'output: protected("out/r.txt")')],
    changes_output=True,
)

CASES["output_protected_removed"] = dict(
    desc="protected() removed from an output: a fresh run leaves it writable",
    files={
        "Snakefile": ALL
        + D("""
            rule r:
                output: protected("out/r.txt")
                shell: "echo v1 > {output}"
        """),
    },
    edits=[("Snakefile", 'output: protected("out/r.txt")', 'output: "out/r.txt"')],
    changes_output=True,
)

TEMP_WF = D("""
    rule all:
        input: "out/final.txt"

    rule a:
        output: MID
        shell: "echo v1 > {output}"

    rule b:
        input: "out/mid.txt"
        output: "out/final.txt"
        shell: "tr a-z A-Z < {input} > {output}"
    # v1
""")

CASES["output_made_temp"] = dict(
    desc="an intermediate output becomes temp(): a fresh run deletes it, a restore may put it back",
    files={"Snakefile": TEMP_WF.replace("MID", '"out/mid.txt"')},
    edits=[("Snakefile", 'output: "out/mid.txt"', 'output: temp("out/mid.txt")')],
    changes_output=True,
)

CASES["temp_output_no_edit"] = dict(
    desc="temp() intermediate, only a comment edited: the fresh run has no out/mid.txt",
    files={"Snakefile": TEMP_WF.replace("MID", 'temp("out/mid.txt")')},
    edits=[("Snakefile", "# v1", "# v2")],
    changes_output=False,
)

CASES["checkpoint_aggregate"] = dict(
    desc="Snakemake checkpoint splits into config-driven parts; the aggregate depends on them",
    files={
        "Snakefile": 'import glob\nconfigfile: "config.yaml"\n\n'
        + D("""
            rule all:
                input: "out/agg.txt"

            checkpoint split:
                output: directory("out/parts")
                params: n=config["n"]
                shell: "mkdir -p {output}; for i in $(seq 1 {params.n}); do echo $i > {output}/p$i.txt; done"

            def parts(wildcards):
                d = checkpoints.split.get().output[0]
                return sorted(glob.glob(d + "/*.txt"))

            rule agg:
                input: parts
                output: "out/agg.txt"
                shell: "cat {input} > {output}"
        """),
        "config.yaml": "n: 3\n",
    },
    edits=[("config.yaml", "n: 3", "n: 4")],
    changes_output=True,
)

# ---------------------------------------------------------------- edits that change nothing
HELPER_WF = (
    D('''
    import os

    def helper(s):
        """Return s decorated."""
        return s + "-v1"

    def unrelated(s):
        return s * 2

    UNUSED = "u1"

''')
    + ALL
    + D("""
    rule r:
        output: "out/r.txt"
        message: "making r"
        run:
            with open(output[0], "w") as fh:
                fh.write(helper("x") + "\\n")
""")
)

CASES["nc_comment_above_helper"] = dict(
    desc="comment lines added at the top of the Snakefile (the run: helper's line numbers shift)",
    files={"Snakefile": HELPER_WF},
    edits=[("Snakefile", "import os\n", "import os\n# a comment\n\n# another comment\n\n")],
    changes_output=False,
)

CASES["nc_docstring"] = dict(
    desc="docstring of a helper reached by run: edited (docstrings are co_consts, not comments)",
    files={"Snakefile": HELPER_WF},
    edits=[("Snakefile", '"""Return s decorated."""', '"""Return s with a suffix."""')],
    changes_output=False,
)

CASES["nc_message"] = dict(
    desc="message: changed",
    files={"Snakefile": HELPER_WF},
    edits=[("Snakefile", 'message: "making r"', 'message: "building r"')],
    changes_output=False,
)

CASES["nc_unreached_function_edit"] = dict(
    desc="a Snakefile function and global that the run: block does not reach changed",
    files={"Snakefile": HELPER_WF},
    edits=[("Snakefile", "return s * 2", "return s * 3"), ("Snakefile", '"u1"', '"u2"')],
    changes_output=False,
)

CASES["nc_unrelated_function_added"] = dict(
    desc="a new function and import added to the Snakefile above the helper",
    files={"Snakefile": HELPER_WF},
    edits=[
        (
            "Snakefile",
            "import os\n",
            "import os\nimport json\n\ndef dump(x):\n    return json.dumps(x)\n",
        )
    ],
    changes_output=False,
)

CASES["nc_run_reformat"] = dict(
    desc="run: block reformatted (call split over lines, extra blank line)",
    files={"Snakefile": HELPER_WF},
    edits=[
        (
            "Snakefile",
            'fh.write(helper("x") + "\\n")',
            'fh.write(\n                helper(\n                    "x"\n                )\n\n                + "\\n"\n            )',
        )
    ],
    changes_output=False,
)

CASES["nc_move_helper_to_include"] = dict(
    desc="the helper reached by run: moved verbatim into an included file (co_filename changes)",
    files={"Snakefile": HELPER_WF, "rules/helpers.smk": "# helpers\n"},
    edits=[
        (
            "Snakefile",
            'def helper(s):\n    """Return s decorated."""\n    return s + "-v1"\n',
            'include: "rules/helpers.smk"\n',
        ),
        (
            "rules/helpers.smk",
            "# helpers\n",
            'def helper(s):\n    """Return s decorated."""\n    return s + "-v1"\n',
        ),
    ],
    changes_output=False,
)

CASES["nc_frozenset_const"] = dict(
    desc="run: code holds a set literal (a frozenset constant, order depends on PYTHONHASHSEED); only a comment edited",
    files={
        "Snakefile": "# top\n"
        + ALL
        + D("""
            rule r:
                output: "out/r.txt"
                params: kind="alpha"
                run:
                    ok = params.kind in {"alpha", "beta", "gamma", "delta", "epsilon"}
                    with open(output[0], "w") as fh:
                        fh.write(str(ok) + "\\n")
        """),
    },
    edits=[("Snakefile", "# top\n", "# top, edited\n")],
    changes_output=False,
)

CASES["nc_reorder_rules"] = dict(
    desc="two rules swapped in the Snakefile",
    files={
        "Snakefile": D("""
            rule all:
                input: "out/r.txt", "out/s.txt"

            rule r:
                output: "out/r.txt"
                shell: "echo r > {output}"

            rule s:
                output: "out/s.txt"
                run:
                    with open(output[0], "w") as fh:
                        fh.write("s\\n")
        """),
    },
    edits=[
        (
            "Snakefile",
            'rule r:\n    output: "out/r.txt"\n    shell: "echo r > {output}"\n\nrule s:\n    output: "out/s.txt"\n    run:\n        with open(output[0], "w") as fh:\n            fh.write("s\\n")\n',
            'rule s:\n    output: "out/s.txt"\n    run:\n        with open(output[0], "w") as fh:\n            fh.write("s\\n")\n\nrule r:\n    output: "out/r.txt"\n    shell: "echo r > {output}"\n',
        )
    ],
    changes_output=False,
)

CASES["nc_rename_unrelated_rule"] = dict(
    desc="another rule renamed and priority/retries/localrules added to the kept rule",
    files={
        "Snakefile": D("""
            rule all:
                input: "out/r.txt", "out/s.txt"

            rule r:
                output: "out/r.txt"
                shell: "echo r > {output}"

            rule s:
                output: "out/s.txt"
                shell: "echo s > {output}"
        """),
    },
    edits=[
        ("Snakefile", "rule s:", "rule make_s:"),
        (
            "Snakefile",
            'output: "out/r.txt"\n',
            'output: "out/r.txt"\n    priority: 5\n    retries: 2\n    localrule: True\n',
        ),
    ],
    changes_output=False,
)

CASES["nc_shell_blank_line"] = dict(
    desc="a blank line and re-indentation inside a triple-quoted shell: block",
    files={
        "Snakefile": ALL
        + D('''
            rule r:
                output: "out/r.txt"
                shell:
                    """
                    echo one > {output}
                    echo two >> {output}
                    """
        '''),
    },
    edits=[("Snakefile", "echo one > {output}\n", "echo one > {output}\n\n")],
    changes_output=False,
)

CASES["nc_script_comment"] = dict(
    desc="a comment added to a script: file",
    files={"Snakefile": ALL + SCRIPT_RULE, "scripts/r.py": W('"v1"')},
    edits=[("scripts/r.py", "with open", "# write the label\nwith open")],
    changes_output=False,
)

CASES["nc_local_module_comment"] = dict(
    desc="a comment added to a local module a run: block uses",
    files={
        "Snakefile": "import helpers5\n\n" + ALL + run_rule("helpers5.label()"),
        "helpers5.py": 'def label():\n    return "v1"\n',
    },
    edits=[("helpers5.py", "def label", "# the label\ndef label")],
    changes_output=False,
)

CASES["nc_unrelated_local_module"] = dict(
    desc="a local module in scripts/ that the script does not import changes",
    files={
        "Snakefile": ALL + SCRIPT_RULE,
        "scripts/r.py": W("label()", "from used import label\n"),
        "scripts/used.py": 'def label():\n    return "v1"\n',
        "scripts/unused.py": "X = 1\n",
    },
    edits=[("scripts/unused.py", "X = 1", "X = 2")],
    changes_output=False,
)

CASES["nc_config_unrelated_run"] = dict(
    desc="a config key the run: block never reads changes (run: counts the whole config)",
    files={
        "Snakefile": 'configfile: "config.yaml"\n\n' + ALL + run_rule('config["greeting"]'),
        "config.yaml": "greeting: hello\nother: x\n",
    },
    edits=[("config.yaml", "other: x", "other: y")],
    changes_output=False,
)

CASES["nc_config_unrelated_script"] = dict(
    desc="a config key the script never reads changes (script reads a constant key)",
    files={
        "Snakefile": 'configfile: "config.yaml"\n\n' + ALL + SCRIPT_RULE,
        "config.yaml": "greeting: hello\nother: x\n",
        "scripts/r.py": W('snakemake.config["greeting"]'),
    },
    edits=[("config.yaml", "other: x", "other: y")],
    changes_output=False,
)

CASES["nc_config_reformat"] = dict(
    desc="config YAML reformatted (flow style, comments) with the same values",
    files={
        "Snakefile": 'configfile: "config.yaml"\n\n' + ALL + SCRIPT_RULE,
        "config.yaml": "opts:\n  n: 3\n  tags: [a, b]\n",
        "scripts/r.py": W('snakemake.config["opts"]'),
    },
    edits=[
        (
            "config.yaml",
            "opts:\n  n: 3\n  tags: [a, b]\n",
            "# options\nopts: {n: 3, tags: [a, b]}\n",
        )
    ],
    changes_output=False,
)

CASES["nc_conda_env_unused"] = dict(
    desc="conda: env file edited, but the run does not use --use-conda",
    files={
        "Snakefile": ALL
        + D("""
            rule r:
                output: "out/r.txt"
                conda: "envs/tools.yaml"
                shell: "echo v1 > {output}"
        """),
        "envs/tools.yaml": "channels: [conda-forge]\ndependencies:\n  - coreutils\n",
    },
    edits=[("envs/tools.yaml", "  - coreutils\n", "  - coreutils\n  - grep\n")],
    changes_output=False,
)

CASES["nc_threads_above_cores"] = dict(
    desc="threads: 8 -> 16 with --cores 2 (the job gets 2 either way)",
    files={
        "Snakefile": ALL
        + D("""
            rule r:
                output: "out/r.txt"
                threads: 8
                shell: "echo {threads} > {output}"
        """),
    },
    edits=[("Snakefile", "threads: 8", "threads: 16")],
    changes_output=False,
)

CASES["nc_cores_no_threads"] = dict(
    desc="--cores 2 at site A, --cores 4 at site B, for a single-threaded shell job",
    files={
        "Snakefile": ALL
        + D("""
            rule r:
                output: "out/r.txt"
                shell: "echo v1 > {output}"
        """),
    },
    edits=[],
    cores_a=2,
    cores_b=4,
    changes_output=False,
)

CASES["nc_params_keyword_reorder"] = dict(
    desc="params keywords reordered; the script uses them by name",
    files={
        "Snakefile": ALL
        + D("""
            rule r:
                output: "out/r.txt"
                params: a=1, b=2
                script: "scripts/r.py"
        """),
        "scripts/r.py": W("snakemake.params.a * 10 + snakemake.params.b"),
    },
    edits=[("Snakefile", "params: a=1, b=2", "params: b=2, a=1")],
    changes_output=False,
)

CASES["nc_input_touch"] = dict(
    desc="input rewritten with the same content (only its mtime changes)",
    files={
        "Snakefile": ALL
        + D("""
            rule r:
                input: "data/a.txt"
                output: "out/r.txt"
                shell: "tr a-z A-Z < {input} > {output}"
        """),
        "data/a.txt": "hello\n",
    },
    edits=[("data/a.txt", "hello", "hello")],
    changes_output=False,
)

CASES["nc_wildcard_constraints"] = dict(
    desc="a wildcard_constraints block added that matches the same jobs",
    files={
        "Snakefile": D("""
            rule all:
                input: "out/a.txt", "out/b.txt"

            rule r:
                output: "out/{s}.txt"
                shell: "echo {wildcards.s} > {output}"
        """),
    },
    edits=[("Snakefile", "rule r:\n", 'wildcard_constraints:\n    s="[a-z]+"\n\nrule r:\n')],
    changes_output=False,
)


FIRST_PASS_STALE = {
    "config_mapping_order",
    "run_random_seed",
    "snakefile_environ",
    "run_pandas_option",
    "run_function_attribute",
    "run_module_monkeypatch",
    "run_singledispatch",
    "output_protected_removed",
    "run_exec_file",
    "output_protected_added",
    "run_eval_string",
    "script_syspath_lib",
    "param_dict_order",
    "bash_script_source",
    "param_class_object",
    "run_config_order",
    "run_global_dict_order",
    "shell_undeclared_script",
    "param_dataclass_repr_false",
    "param_pandas_df",
    "input_symlink_retarget",
    "run_module_settings_update",
    "script_exec_file",
    "param_lossy_repr",
    "script_shell_prefix_env",
    "run_globals_lookup",
}
FIRST_PASS_UNNEEDED = {
    "nc_shell_blank_line",
    "nc_script_comment",
    "nc_config_unrelated_run",
    "nc_local_module_comment",
    "nc_docstring",
    "nc_run_reformat",
    "nc_conda_env_unused",
}
KNOWN_UNNEEDED = {
    "nc_docstring": "a docstring is a constant of the function's code (code may read __doc__)",
    "nc_shell_blank_line": "the shell text changed: the command is keyed as text",
    "nc_script_comment": "a script counts by its bytes",
    "nc_local_module_comment": "a local module counts by its bytes",
    "nc_config_unrelated_run": "a run: block counts the whole config",
    "nc_conda_env_unused": "the conda env file counts even without --use-conda",
}
"""Edits that change nothing a job does but still rerun it (docs/checkpoints.md: never stale)."""
NONDETERMINISTIC: dict[str, str] = {}
"""None: run_random_seed looked like unseeded randomness to this side, but the Snakefile seeds
random (42, edited to 43); the helper's report said so, and the key now reads the global
generators' state for run: blocks."""
