# ruff: noqa: E501
"""Coverage from Snakemake's grammar (issue 26, part 2): for every keyword of the installed
Snakemake's parser (rule, global and ``module`` keywords), generated edits through the store.

Each keyword has a case here (a rule ``k_<case>`` writing ``out/<case>.txt``, or a global
line) with edits that change what its job does (site B must rerun it and end like a fresh
run) and edits that do not (site B must restore it), or a reason it cannot be exercised here
(SKIPPED, matching docs/checkpoints.md's table). A keyword in neither fails the first test
until it is classified. One workflow holds every case; site A runs it with a store, then two
rounds each apply every case's edits of one kind to a fresh copy, run it with the store
(site B) and without (site C), and compare every file and which rules reran.
"""

import os
import re
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
from snakemake import parser

from tests.conftest import snakemake_command

pytestmark = pytest.mark.integration

# case -> (keyword table, keyword, Snakefile text, {"rerun": [edits], "restore": [edits]},
#          extra files). An edit is (file, old, new). "rerun" edits change the job's key (all
# but the software ones also its output); "restore" edits change nothing the job does.
CASES: dict[str, tuple[str, str, str, dict[str, list[tuple[str, str, str]]], dict]] = {}


def case(name, table, keyword, text, rerun=(), restore=(), files=None):
    CASES[name] = (
        table,
        keyword,
        textwrap.dedent(text),
        {"rerun": list(rerun), "restore": list(restore)},
        files or {},
    )


S = "Snakefile"

case(
    "input",
    "rule",
    "input",
    """
rule k_input:
    input: "data/a.txt", "data/b.txt"
    output: "out/input.txt"
    shell: "cat {input} > {output}"
""",
    rerun=[(S, 'input: "data/a.txt", "data/b.txt"', 'input: "data/b.txt", "data/a.txt"')],
    restore=[
        (
            S,
            'input: "data/b.txt", "data/a.txt"',
            'input:\n        "data/b.txt",\n        "data/a.txt",',
        )
    ],
)
case(
    "output",
    "rule",
    "output",
    """
rule k_output:
    output: "out/output.txt", "out/output2.txt"
    shell: "echo first > {output[0]}; echo second > {output[1]}"
""",
    rerun=[
        (
            S,
            'output: "out/output.txt", "out/output2.txt"',
            'output: "out/output2.txt", "out/output.txt"',
        )
    ],
    restore=[
        (
            S,
            'output: "out/output2.txt", "out/output.txt"',
            'output:\n        "out/output2.txt",\n        "out/output.txt"',
        )
    ],
)
case(
    "params",
    "rule",
    "params",
    """
rule k_params:
    output: "out/params.txt"
    params: word="one", table={"a": 1, "b": 2}
    shell: "echo {params.word} > {output}"
""",
    rerun=[(S, 'word="one"', 'word="two"')],
    # dict order counts (iterating a param is what a job sees): reformatting does not
    restore=[(S, '{"a": 1, "b": 2}', '{"a": 1,  "b": 2}')],
)
case(
    "threads",
    "rule",
    "threads",
    """
rule k_threads:
    output: "out/threads.txt"
    threads: 1
    shell: "echo {threads} > {output}"
""",
    rerun=[(S, "threads: 1", "threads: 2")],
    # 2 -> 3 at --cores 2: the job still gets 2 threads (first round made it 2)
    restore=[(S, "threads: 2", "threads: 3")],
)
case(
    "resources",
    "rule",
    "resources",
    """
rule k_resources:
    output: "out/resources.txt"
    resources: mem_mb=100
    shell: "echo {resources.mem_mb} > {output}"
""",
    rerun=[(S, "mem_mb=100", "mem_mb=200")],
    restore=[(S, "resources: mem_mb=200", "resources:\n        mem_mb=200,")],
)
case(
    "retries",
    "rule",
    "retries",
    """
rule k_retries:
    output: "out/retries.txt"
    retries: 0
    shell: "echo retries > {output}"
""",
    restore=[(S, "retries: 0", "retries: 2")],
)
case(
    "priority",
    "rule",
    "priority",
    """
rule k_priority:
    output: "out/priority.txt"
    priority: 1
    shell: "echo priority > {output}"
""",
    restore=[(S, "priority: 1", "priority: 50")],
)
case(
    "log",
    "rule",
    "log",
    """
rule k_log:
    output: "out/log.txt"
    log: "logs/k_log.log"
    shell: "echo log > {output}; echo logged > {log}"
""",
    rerun=[(S, 'log: "logs/k_log.log"', 'log: "logs/k_log_renamed.log"')],
    restore=[(S, 'log: "logs/k_log_renamed.log"', 'log:\n        "logs/k_log_renamed.log",')],
)
case(
    "message",
    "rule",
    "message",
    """
rule k_message:
    output: "out/message.txt"
    message: "making {output}"
    shell: "echo message > {output}"
""",
    restore=[(S, 'message: "making {output}"', 'message: "now making {output}"')],
)
case(
    "benchmark",
    "rule",
    "benchmark",
    """
rule k_benchmark:
    output: "out/benchmark.txt"
    benchmark: "bench/k_benchmark.tsv"
    shell: "echo benchmark > {output}"
""",
    rerun=[(S, 'benchmark: "bench/k_benchmark.tsv"', 'benchmark: "bench/k_benchmark2.tsv"')],
)
case(
    "conda",
    "rule",
    "conda",
    """
rule k_conda:
    output: "out/conda.txt"
    conda: "envs/tool.yaml"
    shell: "echo conda > {output}"
""",
    rerun=[("envs/tool.yaml", "python=3.11", "python=3.12")],
    files={"envs/tool.yaml": "channels: [conda-forge]\ndependencies: [python=3.11]\n"},
)
for _kw in ("singularity", "container", "containerized"):
    case(
        _kw,
        "rule",
        _kw,
        f"""
rule k_{_kw}:
    output: "out/{_kw}.txt"
    {_kw}: "docker://busybox:1.36"
    shell: "echo {_kw} > {{output}}"
""",
        rerun=[(S, f'{_kw}: "docker://busybox:1.36"', f'{_kw}: "docker://busybox:1.37"')],
    )
case(
    "envmodules",
    "rule",
    "envmodules",
    """
rule k_envmodules:
    output: "out/envmodules.txt"
    envmodules: "bio/tool/1.0"
    shell: "echo envmodules > {output}"
""",
    rerun=[(S, '"bio/tool/1.0"', '"bio/tool/2.0"')],
)
case(
    "wildcard_constraints",
    "rule",
    "wildcard_constraints",
    """
rule k_wildcard_constraints:
    output: "out/wc_{name}.txt"
    wildcard_constraints: name="[a-z]+"
    shell: "echo {wildcards.name} > {output}"
""",
    restore=[(S, 'name="[a-z]+"', 'name="[a-z0-9]+"')],
)
case(
    "shadow",
    "rule",
    "shadow",
    """
rule k_shadow:
    output: "out/shadow.txt"
    shadow: "minimal"
    shell: "echo shadow > {output}"
""",
    restore=[(S, 'shadow: "minimal"', 'shadow: "shallow"')],
)
case(
    "group",
    "rule",
    "group",
    """
rule k_group:
    output: "out/group.txt"
    group: "g1"
    shell: "echo group > {output}"
""",
    rerun=[(S, "echo group >", "echo group2 >")],
)
case(
    "cache",
    "rule",
    "cache",
    """
rule k_cache:
    output: "out/cache.txt"
    shell: "echo cache > {output}"
""",
    restore=[(S, 'output: "out/cache.txt"', 'output: "out/cache.txt"\n    cache: True')],
)
case(
    "handover",
    "rule",
    "handover",
    """
rule k_handover:
    output: "out/handover.txt"
    shell: "echo {threads} > {output}"
""",
    # a handover job takes every core: its {threads} changes
    rerun=[(S, 'output: "out/handover.txt"', 'output: "out/handover.txt"\n    handover: True')],
)
case(
    "default_target",
    "rule",
    "default_target",
    """
rule k_default_target:
    output: "out/default_target.txt"
    shell: "echo default_target > {output}"
""",
    restore=[
        (
            S,
            'output: "out/default_target.txt"',
            'output: "out/default_target.txt"\n    default_target: False',
        )
    ],
)
case(
    "localrule",
    "rule",
    "localrule",
    """
rule k_localrule:
    output: "out/localrule.txt"
    shell: "echo localrule > {output}"
""",
    restore=[
        (S, 'output: "out/localrule.txt"', 'output: "out/localrule.txt"\n    localrule: True')
    ],
)
case(
    "name",
    "rule",
    "name",
    """
rule k_name:
    output: "out/name.txt"
    shell: "echo name > {output}"
""",
    rerun=[(S, "rule k_name:", 'rule k_name:\n    name: "k_name_renamed"')],
)
case(
    "run",
    "rule",
    "run",
    """
def suffix_of(word):
    return word + "!"

rule k_run:
    output: "out/run.txt"
    run:
        with open(output[0], "w") as f:
            f.write(suffix_of("run") + "\\n")
""",
    rerun=[(S, 'return word + "!"', 'return word + "?"')],
    restore=[
        (S, "def suffix_of(word):", "# a comment moving every line below\n\ndef suffix_of(word):")
    ],
)
case(
    "shell",
    "rule",
    "shell",
    """
PREFIX_WORD = "hello"

rule k_shell:
    output: "out/shell.txt"
    shell: "echo {PREFIX_WORD} > {output}"
""",
    rerun=[(S, 'PREFIX_WORD = "hello"', 'PREFIX_WORD = "bye"')],
    restore=[(S, "rule k_shell:", "# the shell rule\nrule k_shell:")],
)
case(
    "script",
    "rule",
    "script",
    """
rule k_script:
    output: "out/script.txt"
    script: "scripts/k_script.py"
""",
    rerun=[("helpers/words.py", 'WORD = "one"', 'WORD = "two"')],
    restore=[(S, "rule k_script:", "# the script rule\nrule k_script:")],
    files={
        "scripts/k_script.py": "import sys\nsys.path.insert(0, snakemake.scriptdir + '/..')\n"
        "from helpers.words import WORD\nopen(snakemake.output[0], 'w').write(WORD + '\\n')\n",
        "helpers/__init__.py": "",
        "helpers/words.py": 'WORD = "one"\n',
    },
)
case(
    "wrapper",
    "rule",
    "wrapper",
    """
rule k_wrapper:
    output: "out/wrapper.txt"
    wrapper: "file:wrappers/k_wrapper"
""",
    rerun=[("wrappers/k_wrapper/wrapper.py", "v1", "v2")],
    files={
        "wrappers/k_wrapper/wrapper.py": "open(snakemake.output[0], 'w').write('v1\\n')\n",
        "wrappers/k_wrapper/environment.yaml": "channels: [conda-forge]\ndependencies: [python]\n",
    },
)
case(
    "template_engine",
    "rule",
    "template_engine",
    """
rule k_template_engine:
    input: "templates/t.txt"
    output: "out/template_engine.txt"
    params: who="world"
    template_engine: "jinja2"
""",
    rerun=[("templates/t.txt", "hello", "goodbye")],
    restore=[(S, "rule k_template_engine:", "# templated\nrule k_template_engine:")],
    files={"templates/t.txt": "hello {{ params.who }}\n"},
)
# global keywords
case(
    "include",
    "global",
    "include",
    """
include: "rules/extra.smk"

rule k_include:
    output: "out/include.txt"
    run:
        with open(output[0], "w") as f:
            f.write(extra_word() + "\\n")
""",
    rerun=[("rules/extra.smk", '"extra"', '"more"')],
    files={"rules/extra.smk": 'def extra_word():\n    return "extra"\n'},
)
case(
    "configfile",
    "global",
    "configfile",
    """
configfile: "config.yaml"

rule k_configfile:
    output: "out/configfile.txt"
    script: "scripts/k_configfile.py"
""",
    rerun=[("config.yaml", "read: 1", "read: 2")],
    restore=[("config.yaml", "unread: 1", "unread: 2")],
    files={
        "config.yaml": "read: 1\nunread: 1\nsub:\n  word: alpha\n",
        "scripts/k_configfile.py": "open(snakemake.output[0], 'w').write(str(snakemake.config['read']) + '\\n')\n",
    },
)
case(
    "ruleorder",
    "global",
    "ruleorder",
    """
rule k_ruleorder:
    output: "out/ruleorder.txt"
    shell: "echo ruleorder > {output}"
""",
    restore=[(S, "rule k_ruleorder:", "ruleorder: k_ruleorder > k_priority\n\nrule k_ruleorder:")],
)
case(
    "localrules",
    "global",
    "localrules",
    """
rule k_localrules:
    output: "out/localrules.txt"
    shell: "echo localrules > {output}"
""",
    restore=[(S, "rule k_localrules:", "localrules: k_localrules\n\nrule k_localrules:")],
)
case(
    "handlers",
    "global",
    "onstart",
    """
onstart:
    print("starting")

onsuccess:
    print("done")

onerror:
    print("failed")
""",
    restore=[
        (S, 'print("starting")', 'print("starting now")'),
        (S, 'print("done")', 'print("all done")'),
    ],
)
case(
    "global_wildcard_constraints",
    "global",
    "wildcard_constraints",
    """
wildcard_constraints:
    anything="[a-z]+"
""",
    restore=[(S, 'anything="[a-z]+"', 'anything="[a-z_]+"')],
)
case(
    "resource_scopes",
    "global",
    "resource_scopes",
    """
resource_scopes:
    widgets="global"
""",
    restore=[(S, 'widgets="global"', 'widgets="local"')],
)
case(
    "report",
    "global",
    "report",
    """
report: "report/workflow.rst"
""",
    restore=[("report/workflow.rst", "A workflow.", "The workflow.")],
    files={"report/workflow.rst": "A workflow.\n"},
)
case(
    "checkpoint",
    "global",
    "checkpoint",
    """
checkpoint k_checkpoint:
    output: "out/checkpoint.txt"
    shell: "echo checkpoint > {output}"
""",
    rerun=[(S, "echo checkpoint >", "echo checkpoint2 >")],
)
case(
    "module",
    "global",
    "module",
    """
module m:
    snakefile: "sub/Snakefile"
    config: config["sub"]
    skip_validation: True

use rule * from m as m_*
""",
    rerun=[("config.yaml", "word: alpha", "word: beta")],
    files={
        "sub/Snakefile": 'rule word:\n    output: "out/module.txt"\n    script: "word.py"\n',
        "sub/word.py": "open(snakemake.output[0], 'w').write(snakemake.config['word'] + '\\n')\n",
    },
)
case(
    "use",
    "global",
    "use",
    """
rule k_use_base:
    output: "out/use_base.txt"
    params: word="base"
    shell: "echo {params.word} > {output}"

use rule k_use_base as k_use with:
    output: "out/use.txt"
    params: word="derived"
""",
    rerun=[(S, 'params: word="derived"', 'params: word="derived2"')],
)

SKIPPED = {
    ("rule", "pathvars"): "covered through the paths they expand to (the io edits above)",
    (
        "rule",
        "notebook",
    ): "needs a Jupyter kernel per job; keyed like script: (tests/integration/nbrewind)",
    ("rule", "cwl"): "uncacheable by design (its jobs always run); needs cwltool",
    ("global", "envvars"): "not covered: documented (values are often secrets)",
    ("global", "workdir"): "moves every path: a site with another workdir is another layout",
    ("global", "pathvars"): "covered through the paths they expand to",
    (
        "global",
        "pepfile",
    ): "needs peppy, not installed; params and inputs from a PEP are keyed as values",
    ("global", "pepschema"): "needs peppy, not installed; validation only",
    ("global", "rule"): "every rule keyword above",
    (
        "global",
        "singularity",
    ): "the same component as the rule keyword (software:container), tested there",
    (
        "global",
        "container",
    ): "the same component as the rule keyword (software:container), tested there",
    ("global", "containerized"): "the same component as the rule keyword, tested there",
    ("global", "conda"): "the same component as the rule keyword (software:conda), tested there",
    ("global", "scattergather"): "covered through the paths it splits into",
    ("global", "inputflags"): "keyed through each file's flags (io:input), as the rule's own",
    ("global", "outputflags"): "keyed through each file's flags (io:output), as the rule's own",
    ("global", "storage"): "needs a storage provider plugin and a remote",
    ("global", "onsuccess"): "exercised with onstart (case 'handlers')",
    ("global", "onerror"): "exercised with onstart (case 'handlers')",
    ("module", "name"): "exercised by case 'module'",
    ("module", "snakefile"): "exercised by case 'module'",
    ("module", "config"): "exercised by case 'module' (its config edit)",
    ("module", "skip_validation"): "exercised by case 'module'",
    ("module", "meta_wrapper"): "needs the remote wrappers repository",
    ("module", "prefix"): "covered through the paths it rewrites",
    ("module", "replace_prefix"): "covered through the paths it rewrites",
    ("module", "pathvars"): "covered through the paths they expand to",
}

BASE_FILES = {"data/a.txt": "a\n", "data/b.txt": "b\n"}
RULE_OF = {"module": "m_word"}
WHOLE_CONFIG = {"k_run", "k_include", "k_wrapper", "k_template_engine"}
"""Rules that count the whole config (docs/checkpoints.md): an unread config value's edit
reruns them."""
NEVER_RESTORED = {"k_group", "k_checkpoint", "k_name"}
"""Rules whose edit is not announced as a rerun: groups and checkpoints always run; a
renamed rule is a new job (no earlier key under its name to compare with)."""


def grammar() -> set[tuple[str, str]]:
    return (
        {("rule", k) for k in (*parser.rule_property_subautomata, *parser.rule_run_subautomata)}
        | {("global", k) for k in parser.Python.subautomata}
        | {("module", k) for k in parser.Module.subautomata}
    )


def test_every_keyword_of_the_installed_grammar_has_a_case_or_a_reason():
    covered = {(table, kw) for table, kw, *_ in CASES.values()} | set(SKIPPED)
    assert grammar() <= covered, sorted(grammar() - covered)
    assert set(SKIPPED) <= grammar(), sorted(set(SKIPPED) - grammar())


def outputs_of(text: str) -> list[str]:
    return re.findall(r'output: "(out/[^"{]+)"', text)


def build(site: Path) -> None:
    files = dict(BASE_FILES)
    rules = []
    targets = []
    for _, (_, _, text, _, extra) in CASES.items():
        files.update(extra)
        rules.append(text)
        targets += [t for t in outputs_of(text) if t != "out/module.txt"]
    targets += ["out/wc_abc.txt", "out/module.txt", "out/output2.txt"]
    head = "rule all:\n    input:\n" + "".join(f'        "{t}",\n' for t in dict.fromkeys(targets))
    files["Snakefile"] = head + "\n".join(rules)
    for rel, text in files.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text)


def apply(site: Path, kind: str) -> set[str]:
    """Apply every case's edits of ``kind``; the rules they touch."""
    touched = set()
    for name, (_, _, _, edits, _) in CASES.items():
        for rel, old, new in edits[kind]:
            path = site / rel
            text = path.read_text()
            assert old in text, (name, kind, old)
            path.write_text(text.replace(old, new, 1))
            touched.add(name)
    return touched


def listing(site: Path) -> dict[str, object]:
    found: dict[str, object] = {}
    for root, dirs, files in os.walk(site):
        dirs[:] = [d for d in dirs if d != ".snakemake"]
        for name in files:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, site)
            if rel.startswith("bench/"):
                found[rel] = "benchmark (timings differ)"
            else:
                found[rel] = (Path(path).read_bytes(), os.stat(path).st_mode & 0o7777)
    return found


def snakemake(site: Path, *args: str) -> subprocess.CompletedProcess:
    done = subprocess.run(
        snakemake_command(*args, cores=2), cwd=site, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def reran(output: str) -> set[str]:
    found = set()
    for rule in re.findall(r"checkpoints: rule (\w+) \(.*\) reruns:", output):
        found.add(rule)
    return found


def test_generated_edits_per_keyword_rerun_or_restore_and_end_like_a_fresh_run(tmp_path):
    store = str(tmp_path / "store")
    site_a = tmp_path / "site-a"
    build(site_a)
    first = snakemake(site_a, "--sticky-checkpoints", store)
    assert "checkpoints: 0 job(s) restored" in first.stdout + first.stderr
    source = site_a
    for kind in ("rerun", "restore"):
        site_b = tmp_path / kind / "site-b"
        shutil.copytree(
            source, site_b, ignore=shutil.ignore_patterns(".snakemake", "out", "logs", "bench")
        )
        touched = apply(site_b, kind)
        site_c = tmp_path / kind / "site-c"
        shutil.copytree(site_b, site_c)
        with_store = snakemake(site_b, "--sticky-checkpoints", store)
        snakemake(site_c)
        got, fresh = listing(site_b), listing(site_c)
        differing = {
            k: (got.get(k), fresh.get(k))
            for k in got.keys() | fresh.keys()
            if got.get(k) != fresh.get(k)
        }
        assert not differing, f"{kind}: {differing}"
        said = with_store.stdout + with_store.stderr
        rules_rerun = reran(said)
        if kind == "rerun":
            # every touched case reruns (its key changed), except the ones Snakemake never
            # restores (groups, checkpoints): they run anyway.
            expected = {RULE_OF.get(n, f"k_{n}") for n in touched} - NEVER_RESTORED
            assert expected <= rules_rerun, (sorted(expected - rules_rerun), said)
        else:
            # Only the rules that count the whole config (run: blocks, wrappers, templates)
            # rerun, for the config value no job reads: the documented limit.
            reasons = dict(re.findall(r"checkpoints: rule (\w+) \(.*\) reruns: (.*)", said))
            assert set(reasons) <= WHOLE_CONFIG, said
            assert set(reasons.values()) <= {"config changed"}, reasons
        source = site_b
