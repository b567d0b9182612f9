"""The second checkpoint red team's cases (issue 26, 2026-12-06): written from docs/checkpoints.md and README.md only, aimed at how a job's code and modules are found and keyed (include: folders, module snakefiles, sys.path edits, packages, namespace packages, computed imports, shadowing, scripts' search path, moves). 25 cases."""

# ruff: noqa: E501

import textwrap


def D(s):
    return textwrap.dedent(s).lstrip("\n")


CASES = {}


# Two included files in two folders, each folder with its own common.py. Snakemake
# inserts each included file's folder at the front of sys.path, so the folder included
# LAST is searched first: the run: block of rules/align.smk imports report/common.py.
_TWO_FOLDERS = {
    "Snakefile": D("""
        rule all:
            input: "out/align.txt", "out/report.txt"

        include: "rules/align.smk"
        include: "report/report.smk"
    """),
    "rules/align.smk": D("""
        rule align:
            output: "out/align.txt"
            run:
                import common
                with open(output[0], "w") as fh:
                    fh.write(common.tag("align") + "\\n")
    """),
    "rules/common.py": D("""
        def tag(step):
            return "rules:" + step + ":r1"
    """),
    "report/report.smk": D("""
        rule report:
            input: "out/align.txt"
            output: "out/report.txt"
            run:
                with open(input[0]) as src, open(output[0], "w") as fh:
                    fh.write("report of " + src.read())
    """),
    "report/common.py": D("""
        def tag(step):
            return "report:" + step + ":v1"
    """),
}

CASES["two_include_folders_same_module_later_folder_wins"] = dict(
    desc="rules/align.smk's run: block does `import common` when it runs; rules/ and report/ both hold a common.py, and report/report.smk is included after rules/align.smk, so report/ is first on sys.path and Python loads report/common.py, not the one beside the block's file. Editing report/common.py changes align's output; a key that resolves the import next to the block's own file (rules/common.py) restores it stale",
    files=dict(_TWO_FOLDERS),
    edits=[("report/common.py", ':v1"', ':v2"')],
    changes_output=True,
)

CASES["two_include_folders_same_module_edit_the_unloaded_copy"] = dict(
    desc="the same workflow; only rules/common.py is edited, which Python never loads (report/common.py shadows it on sys.path): nothing a job does changes, so align must be restored, not rerun",
    files=dict(_TWO_FOLDERS),
    edits=[("rules/common.py", ':r1"', ':r2"')],
    changes_output=False,
)


CASES["toplevel_import_caches_module_for_included_block"] = dict(
    desc="the Snakefile imports helper (helper.py beside it) at top level for its sample list; the run: block in rules/stats.smk later does `import helper` when it runs, which returns the module already in sys.modules (the Snakefile folder's helper.py), although rules/ is now first on sys.path and holds its own helper.py. Editing the top-level helper's describe() changes the output; a key that looks the import up on sys.path alone counts rules/helper.py and restores stale",
    files={
        "Snakefile": D("""
            import helper

            SAMPLES = helper.SAMPLES


            rule all:
                input: expand("out/{s}.stats", s=SAMPLES)


            include: "rules/stats.smk"
        """),
        "helper.py": D("""
            SAMPLES = ["a", "b"]


            def describe(name):
                return "sample " + name + " (v1)"
        """),
        "rules/stats.smk": D("""
            rule stats:
                output: "out/{s}.stats"
                run:
                    import helper
                    with open(output[0], "w") as fh:
                        fh.write(helper.describe(wildcards.s) + "\\n")
        """),
        "rules/helper.py": D("""
            def describe(name):
                return "rules helper " + name
        """),
    },
    edits=[("helper.py", '" (v1)"', '" (v2)"')],
    changes_output=True,
)


CASES["run_block_puts_lib_on_sys_path_itself"] = dict(
    desc="a run: block inserts lib/ into sys.path itself and then imports lib/scaler.py; as Snakemake left sys.path, scaler is nowhere to be found (a naive lookup calls it an installed library and keys it by name). Editing lib/scaler.py's FACTOR changes the output",
    files={
        "Snakefile": D("""
            rule all:
                input: "out/scaled.txt"


            rule scale:
                output: "out/scaled.txt"
                run:
                    import sys
                    if "lib" not in sys.path:
                        sys.path.insert(0, "lib")
                    import scaler
                    with open(output[0], "w") as fh:
                        fh.write(" ".join(str(scaler.scale(x)) for x in [1, 2, 3]) + "\\n")
        """),
        "lib/scaler.py": D("""
            FACTOR = 10


            def scale(x):
                return x * FACTOR
        """),
    },
    edits=[("lib/scaler.py", "FACTOR = 10", "FACTOR = 100")],
    changes_output=True,
)


CASES["snakefile_relative_sys_path_entry_transitive_import"] = dict(
    desc="the Snakefile does sys.path.insert(0, 'lib') (a relative entry); a run: block imports normalize when it runs, and lib/normalize.py imports lib/units.py at its top. Fixing a wrong factor in units.py (the module of a module found through a relative sys.path entry) changes the output",
    files={
        "Snakefile": D("""
            import sys

            sys.path.insert(0, "lib")


            rule all:
                input: "out/norm.txt"


            rule norm:
                output: "out/norm.txt"
                run:
                    import normalize
                    with open(output[0], "w") as fh:
                        fh.write(normalize.to_meters([1, 250, 3000]) + "\\n")
        """),
        "lib/normalize.py": D("""
            from units import FACTORS


            def to_meters(values):
                return ",".join("%.3f" % (v * FACTORS["mm"]) for v in values)
        """),
        "lib/units.py": D("""
            FACTORS = {"mm": 0.01, "cm": 0.01}
        """),
    },
    edits=[("lib/units.py", '"mm": 0.01', '"mm": 0.001')],
    changes_output=True,
)


CASES["script_imports_module_beside_snakefile"] = dict(
    desc="a script: in scripts/ does `import thresholds`, a module that sits beside the Snakefile, not beside the script: it works because Snakemake appends its own sys.path (which holds the Snakefile's folder) to the script's. A key that looks for the script's local imports in the script's folder only misses thresholds.py; editing it changes the output",
    files={
        "Snakefile": D("""
            rule all:
                input: "out/summary.txt"


            rule summarize:
                output: "out/summary.txt"
                script: "scripts/summarize.py"
        """),
        "scripts/summarize.py": D("""
            import thresholds

            with open(snakemake.output[0], "w") as fh:
                fh.write("threshold=%s\\n" % thresholds.MIN_SCORE)
        """),
        "thresholds.py": D("""
            MIN_SCORE = 0.5
        """),
    },
    edits=[("thresholds.py", "MIN_SCORE = 0.5", "MIN_SCORE = 0.75")],
    changes_output=True,
)


# A script in scripts/ imports common; scripts/common.py exists, but so does common.py
# beside the Snakefile. The script's sys.path is Python's own, then Snakemake's (which
# holds the Snakefile's folder), then the script's folder last: the Snakefile folder's
# common.py wins.
_SCRIPT_SHADOW = {
    "Snakefile": D("""
        rule all:
            input: "out/plot.txt"


        rule plot:
            output: "out/plot.txt"
            script: "scripts/plot.py"
    """),
    "scripts/plot.py": D("""
        import common

        with open(snakemake.output[0], "w") as fh:
            fh.write(common.title("coverage") + "\\n")
    """),
    "scripts/common.py": D("""
        def title(name):
            return "scripts-common " + name + " s1"
    """),
    "common.py": D("""
        def title(name):
            return "root-common " + name + " v1"
    """),
}

CASES["script_helper_shadowed_by_snakefile_folder_module"] = dict(
    desc="scripts/plot.py does `import common`; scripts/common.py sits beside it, but Snakemake puts its own sys.path (the Snakefile's folder first) ahead of the script's folder, so Python loads the Snakefile folder's common.py. Editing that one changes the output; a key that resolves the import beside the script counts scripts/common.py and restores stale",
    files=dict(_SCRIPT_SHADOW),
    edits=[("common.py", ' v1"', ' v2"')],
    changes_output=True,
)

CASES["script_helper_shadowed_edit_the_unloaded_copy"] = dict(
    desc="the same workflow; only scripts/common.py is edited, which the script never loads (the Snakefile folder's common.py comes first on its sys.path): plot must be restored",
    files=dict(_SCRIPT_SHADOW),
    edits=[("scripts/common.py", ' s1"', ' s2"')],
    changes_output=False,
)


CASES["script_imports_lib_put_on_sys_path_by_snakefile"] = dict(
    desc="the Snakefile inserts os.path.join(workflow.basedir, 'lib') into sys.path; scripts/clean.py then imports textops from lib/ without touching sys.path itself (Snakemake hands its sys.path to the script). The script names no sys.path, so module:* does not kick in; editing lib/textops.py changes the output",
    files={
        "Snakefile": D("""
            import os
            import sys

            sys.path.insert(0, os.path.join(workflow.basedir, "lib"))


            rule all:
                input: "out/clean.txt"


            rule clean:
                output: "out/clean.txt"
                script: "scripts/clean.py"
        """),
        "scripts/clean.py": D("""
            from textops import squeeze

            with open(snakemake.output[0], "w") as fh:
                fh.write(squeeze("  a   b    c ") + "\\n")
        """),
        "lib/textops.py": D("""
            def squeeze(text):
                return " ".join(text.split())
        """),
    },
    edits=[("lib/textops.py", 'return " ".join(text.split())', 'return "_".join(text.split())')],
    changes_output=True,
)


CASES["script_loads_plugin_by_file_path"] = dict(
    desc="scripts/apply.py loads plugins/rot.py with importlib.util.spec_from_file_location (a path built from __file__), neither import_module, __import__, runpy, exec, eval nor sys.path: a common way to load a plugin file. Editing plugins/rot.py changes the output",
    files={
        "Snakefile": D("""
            rule all:
                input: "out/rot.txt"


            rule apply:
                output: "out/rot.txt"
                script: "scripts/apply.py"
        """),
        "scripts/apply.py": D("""
            import importlib.util
            import os

            path = os.path.join(os.path.dirname(__file__), "..", "plugins", "rot.py")
            spec = importlib.util.spec_from_file_location("rot_plugin", path)
            plugin = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(plugin)

            with open(snakemake.output[0], "w") as fh:
                fh.write(plugin.transform("hello") + "\\n")
        """),
        "plugins/rot.py": D("""
            SHIFT = 1


            def transform(text):
                return "".join(chr((ord(c) - 97 + SHIFT) % 26 + 97) for c in text)
        """),
    },
    edits=[("plugins/rot.py", "SHIFT = 1", "SHIFT = 13")],
    changes_output=True,
)


CASES["run_block_loads_step_file_named_in_params"] = dict(
    desc="a Snakefile function loads a Python file by path (importlib.util.spec_from_file_location) and a run: block calls it with the path from params: the param is keyed as the text 'steps/clean.py', the file's content only if the key follows the loader. Editing steps/clean.py changes the output",
    files={
        "Snakefile": D("""
            import importlib.util


            def load_step(path):
                spec = importlib.util.spec_from_file_location("step", path)
                mod = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(mod)
                return mod


            rule all:
                input: "out/step.txt"


            rule step:
                output: "out/step.txt"
                params:
                    code="steps/clean.py",
                run:
                    step = load_step(params.code)
                    with open(output[0], "w") as fh:
                        fh.write(step.clean("  Mixed Case Name  ") + "\\n")
        """),
        "steps/clean.py": D("""
            def clean(text):
                return text.strip().lower()
        """),
    },
    edits=[
        (
            "steps/clean.py",
            "return text.strip().lower()",
            'return text.strip().lower().replace(" ", "_")',
        )
    ],
    changes_output=True,
)


CASES["module_snakefile_in_subfolder_runtime_import"] = dict(
    desc="`module qc: snakefile: \"modules/qc/Snakefile\"`; the module's run: block imports qc_metrics when it runs, which Python finds in modules/qc/ (Snakemake puts the module's folder first on sys.path when it loads it), although an older qc_metrics.py sits beside the main Snakefile. Editing modules/qc/qc_metrics.py changes the output; a key that resolves from the main Snakefile's folder restores stale",
    files={
        "Snakefile": D("""
            rule all:
                input: "out/qc.txt"


            module qc:
                snakefile: "modules/qc/Snakefile"


            use rule * from qc as qc_*
        """),
        "modules/qc/Snakefile": D("""
            rule metrics:
                output: "out/qc.txt"
                run:
                    import qc_metrics
                    with open(output[0], "w") as fh:
                        fh.write(qc_metrics.report([3, 1, 2]) + "\\n")
        """),
        "modules/qc/qc_metrics.py": D("""
            def report(values):
                return "max=%d" % max(values)
        """),
        "qc_metrics.py": D("""
            def report(values):
                return "legacy report"
        """),
    },
    edits=[
        (
            "modules/qc/qc_metrics.py",
            'return "max=%d" % max(values)',
            'return "max=%d min=%d" % (max(values), min(values))',
        )
    ],
    changes_output=True,
)


CASES["namespace_package_relative_import"] = dict(
    desc="lib/ has no __init__.py (a namespace package); a run: block does `from lib import tally` when it runs, and lib/tally.py does `from .weights import WEIGHTS`. Editing lib/weights.py changes the output",
    files={
        "Snakefile": D("""
            rule all:
                input: "out/score.txt"


            rule score:
                output: "out/score.txt"
                run:
                    from lib import tally
                    with open(output[0], "w") as fh:
                        fh.write("%d\\n" % tally.score(["good", "bad", "bad", "good", "good"]))
        """),
        "lib/tally.py": D("""
            from .weights import WEIGHTS


            def score(words):
                return sum(WEIGHTS.get(w, 0) for w in words)
        """),
        "lib/weights.py": D("""
            WEIGHTS = {"good": 2, "bad": -1}
        """),
    },
    edits=[("lib/weights.py", '"bad": -1', '"bad": -3')],
    changes_output=True,
)


CASES["package_init_reexports_from_submodule_chain"] = dict(
    desc="a run: block does `from textpkg import render` when it runs; textpkg/__init__.py re-exports render from .impl, which takes BULLET from .style. Editing textpkg/style.py (two relative imports away from the name the block imports) changes the output",
    files={
        "Snakefile": D("""
            rule all:
                input: "out/list.txt"


            rule listing:
                output: "out/list.txt"
                run:
                    from textpkg import render
                    with open(output[0], "w") as fh:
                        fh.write(render(["x", "y"]) + "\\n")
        """),
        "textpkg/__init__.py": D("""
            from .impl import render

            __all__ = ["render"]
        """),
        "textpkg/impl.py": D("""
            from .style import BULLET


            def render(items):
                return "\\n".join(BULLET + item for item in items)
        """),
        "textpkg/style.py": D("""
            BULLET = "- "
        """),
    },
    edits=[("textpkg/style.py", 'BULLET = "- "', 'BULLET = "* "')],
    changes_output=True,
)


CASES["package_lazy_getattr_submodule"] = dict(
    desc="formats/__init__.py loads its submodules lazily (a PEP 562 module __getattr__ calling importlib.import_module('.' + name, __name__)); a run: block does `import formats` and uses formats.table.row(...), never importing formats.table by name. Editing formats/table.py changes the output",
    files={
        "Snakefile": D("""
            rule all:
                input: "out/row.txt"


            rule row:
                output: "out/row.txt"
                run:
                    import formats
                    with open(output[0], "w") as fh:
                        fh.write(formats.table.row(["a", "b", "c"]) + "\\n")
        """),
        "formats/__init__.py": D("""
            import importlib

            _LAZY = ("table", "plain")


            def __getattr__(name):
                if name in _LAZY:
                    return importlib.import_module("." + name, __name__)
                raise AttributeError(name)
        """),
        "formats/table.py": D("""
            SEP = "\\t"


            def row(cells):
                return SEP.join(cells)
        """),
        "formats/plain.py": D("""
            def row(cells):
                return " ".join(cells)
        """),
    },
    edits=[("formats/table.py", 'SEP = "\\t"', 'SEP = ","')],
    changes_output=True,
)


CASES["import_module_by_wildcard_name"] = dict(
    desc="a run: block picks its implementation with importlib.import_module('methods.' + wildcards.method); methods/ is a local package with scale.py and shift.py. Editing methods/scale.py changes out/scale.txt (out/shift.txt may rerun or not)",
    files={
        "Snakefile": D("""
            import importlib


            rule all:
                input: "out/scale.txt", "out/shift.txt"


            rule transform:
                output: "out/{method}.txt"
                run:
                    impl = importlib.import_module("methods." + wildcards.method)
                    with open(output[0], "w") as fh:
                        fh.write(" ".join(str(impl.apply(x)) for x in (1, 2, 3)) + "\\n")
        """),
        "methods/__init__.py": "",
        "methods/scale.py": D("""
            def apply(x):
                return x * 2
        """),
        "methods/shift.py": D("""
            def apply(x):
                return x + 1
        """),
    },
    edits=[("methods/scale.py", "return x * 2", "return x * 3")],
    changes_output=True,
)


CASES["lazy_relative_import_inside_package_function"] = dict(
    desc="the Snakefile does `from tools.text import banner` at top level; banner() imports its glyphs only when called, with a relative `from . import glyphs`; a run: block calls banner(). The block itself imports nothing: the lazy import is in a function it reaches, and relative to that function's package. Editing tools/glyphs.py changes the output",
    files={
        "Snakefile": D("""
            from tools.text import banner


            rule all:
                input: "out/banner.txt"


            rule banner_rule:
                output: "out/banner.txt"
                run:
                    with open(output[0], "w") as fh:
                        fh.write(banner("results") + "\\n")
        """),
        "tools/__init__.py": "",
        "tools/text.py": D("""
            def banner(title):
                from . import glyphs

                return glyphs.EDGE + " " + title + " " + glyphs.EDGE
        """),
        "tools/glyphs.py": D("""
            EDGE = "=="
        """),
    },
    edits=[("tools/glyphs.py", 'EDGE = "=="', 'EDGE = "##"')],
    changes_output=True,
)


CASES["pyc_only_module_compiled_by_snakefile"] = dict(
    desc="the workflow ships its codec only compiled: the Snakefile compiles src/codec.py to codec.pyc beside itself (py_compile), and a run: block does `import codec` when it runs, which Python loads from the sourceless codec.pyc (no codec.py anywhere on sys.path). Editing src/codec.py changes codec.pyc and the output; a key that only looks for .py files keys codec by name",
    files={
        "Snakefile": D("""
            import py_compile

            # only the compiled module sits beside the Snakefile; its source lives in src/
            py_compile.compile("src/codec.py", cfile="codec.pyc", doraise=True)


            rule all:
                input: "out/encoded.txt"


            rule encode:
                output: "out/encoded.txt"
                run:
                    import codec
                    with open(output[0], "w") as fh:
                        fh.write(codec.encode("snakemake") + "\\n")
        """),
        "src/codec.py": D("""
            def encode(text):
                return text[::-1]
        """),
    },
    edits=[("src/codec.py", "return text[::-1]", "return text.upper()[::-1]")],
    changes_output=True,
)


CASES["data_file_read_at_import_by_toplevel_module"] = dict(
    desc="labels.py reads labels.json (beside it) into a module global when it is imported; the Snakefile imports labels at top level and a run: block calls labels.label(). The data file is not a declared input, but what it puts in LABELS is a global of a workflow-local module the block reaches (the docs: its globals are part of what the block reaches). Editing labels.json changes the output",
    files={
        "Snakefile": D("""
            import labels


            rule all:
                input: "out/a.label", "out/b.label"


            rule label:
                output: "out/{code}.label"
                run:
                    with open(output[0], "w") as fh:
                        fh.write(labels.label(wildcards.code) + "\\n")
        """),
        "labels.py": D("""
            import json
            import os

            with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "labels.json")) as fh:
                LABELS = json.load(fh)


            def label(code):
                return LABELS.get(code, "unknown")
        """),
        "labels.json": '{"a": "alpha", "b": "beta"}\n',
    },
    edits=[("labels.json", '"beta"', '"bravo"')],
    changes_output=True,
)


CASES["move_function_into_newly_included_subfolder_file"] = dict(
    desc="a refactor: the Snakefile function slugify() that a run: block calls moves, unchanged, into rules/util.smk, which the Snakefile now includes (so rules/ is newly on sys.path). The docs promise this reruns nothing",
    files={
        "Snakefile": D("""
            rule all:
                input: "out/slug.txt"


            def slugify(text):
                return "-".join(text.lower().split())


            rule slug:
                output: "out/slug.txt"
                run:
                    with open(output[0], "w") as fh:
                        fh.write(slugify("Hello Big World") + "\\n")
        """),
        "rules/util.smk": "# helpers shared by the rules (filled in later)\n",
    },
    edits=[
        (
            "Snakefile",
            'def slugify(text):\n    return "-".join(text.lower().split())\n',
            'include: "rules/util.smk"\n',
        ),
        (
            "rules/util.smk",
            "# helpers shared by the rules (filled in later)\n",
            'def slugify(text):\n    return "-".join(text.lower().split())\n',
        ),
    ],
    changes_output=False,
)


CASES["move_function_into_local_module"] = dict(
    desc="a refactor: the Snakefile function clean_name() that a run: block calls moves, unchanged, into textutil.py beside the Snakefile, imported with `from textutil import clean_name`; the function's bytecode, and what it reaches (only builtins), are the same, so nothing the job does changes",
    files={
        "Snakefile": D("""
            def clean_name(text):
                return text.strip().replace(" ", "_").lower()


            rule all:
                input: "out/name.txt"


            rule name:
                output: "out/name.txt"
                run:
                    with open(output[0], "w") as fh:
                        fh.write(clean_name("  Sample One ") + "\\n")
        """),
        "textutil.py": "# text helpers (filled in later)\n",
    },
    edits=[
        (
            "Snakefile",
            'def clean_name(text):\n    return text.strip().replace(" ", "_").lower()\n',
            "from textutil import clean_name\n",
        ),
        (
            "textutil.py",
            "# text helpers (filled in later)\n",
            'def clean_name(text):\n    return text.strip().replace(" ", "_").lower()\n',
        ),
    ],
    changes_output=False,
)


CASES["new_include_adds_folder_to_sys_path_without_shadowing"] = dict(
    desc="a run: block imports helper (beside the Snakefile) when it runs; the edit makes the Snakefile include rules/common.smk (a constant no job uses), which puts rules/ first on sys.path; rules/ holds plot_utils.py but no helper.py, so Python still loads the same helper.py and nothing a job does changes: count must be restored",
    files={
        "Snakefile": D("""
            rule all:
                input: "out/count.txt"


            rule count:
                output: "out/count.txt"
                run:
                    import helper
                    with open(output[0], "w") as fh:
                        fh.write(helper.count_words("one two three") + "\\n")
        """),
        "helper.py": D("""
            def count_words(text):
                return "words=%d" % len(text.split())
        """),
        "rules/common.smk": D("""
            PLOT_DPI = 150
        """),
        "rules/plot_utils.py": D("""
            def dpi_note(dpi):
                return "dpi=%d" % dpi
        """),
    },
    edits=[("Snakefile", "rule all:\n", 'include: "rules/common.smk"\n\n\nrule all:\n')],
    changes_output=False,
)


CASES["newly_included_folder_shadows_runtime_import"] = dict(
    desc='a run: block imports fmt when it runs, found beside the Snakefile (comma-separated); rules/ holds a newer fmt.py (tab-separated) that was never on sys.path. The edit only adds `include: "rules/extra.smk"`: Snakemake now puts rules/ first on sys.path and Python loads rules/fmt.py, so the output changes although no code the block names changed. Since the sys.path folders are no longer keyed, only resolving the import afresh at site B catches it',
    files={
        "Snakefile": D("""
            rule all:
                input: "out/table.txt"


            rule table:
                output: "out/table.txt"
                run:
                    import fmt
                    with open(output[0], "w") as fh:
                        fh.write(fmt.row(["id", "value"]) + "\\n")
        """),
        "fmt.py": D("""
            def row(cells):
                return ",".join(cells)
        """),
        "rules/fmt.py": D("""
            def row(cells):
                return "\\t".join(cells)
        """),
        "rules/extra.smk": D("""
            EXTRA_NOTE = "rules being migrated here"
        """),
    },
    edits=[("Snakefile", "rule all:\n", 'include: "rules/extra.smk"\n\n\nrule all:\n')],
    changes_output=True,
)


CASES["comment_only_edit_in_runtime_imported_module"] = dict(
    desc="a run: block imports report_helpers.py when it runs; the edit adds a comment block at the top of that module (every line moves, no code changes). The key reads such modules 'by the content of their .py files' but also 'by bytecode, not by line: a comment that moves lines changes nothing'; nothing the job does changes, so it must be restored",
    files={
        "Snakefile": D("""
            rule all:
                input: "out/report.txt"


            rule report:
                output: "out/report.txt"
                run:
                    import report_helpers
                    with open(output[0], "w") as fh:
                        fh.write(report_helpers.header("QC") + "\\n")
        """),
        "report_helpers.py": D("""
            def header(title):
                return "# " + title.upper()
        """),
    },
    edits=[
        (
            "report_helpers.py",
            "def header(title):",
            "# Helpers for the report rules.\n# Keep them free of side effects.\n\n\ndef header(title):",
        )
    ],
    changes_output=False,
)


CASES["workflow_subfolder_layout_with_stray_root_module"] = dict(
    desc="the standard layout: workflow/Snakefile (found by Snakemake from the repository root, which is the working directory), workflow/rules/calc.smk whose run: block imports common when it runs, workflow/common.py; a stray common.py at the repository root is NOT on sys.path (Snakemake adds the Snakefile's folders, not the working directory). Editing workflow/common.py changes the output; a key that resolves imports relative to the working directory counts the stray one and restores stale",
    files={
        "workflow/Snakefile": D("""
            rule all:
                input: "out/calc.txt"


            include: "rules/calc.smk"
        """),
        "workflow/rules/calc.smk": D("""
            rule calc:
                output: "out/calc.txt"
                run:
                    import common
                    with open(output[0], "w") as fh:
                        fh.write("total=%d\\n" % common.total([1, 2, 3]))
        """),
        "workflow/common.py": D("""
            def total(values):
                return sum(values)
        """),
        "common.py": D("""
            def total(values):
                return -1
        """),
    },
    edits=[("workflow/common.py", "return sum(values)", "return sum(v * v for v in values)")],
    changes_output=True,
)
