"""Each distribution under plugins/ installs with ``pip install ./plugins/<each>`` into a clean
virtual environment, and works there.

The environment sees no system site-packages: pip builds each distribution (with build
isolation, setuptools from the package index) and installs it and its third-party
dependencies (Snakemake, papermill, ...; not torch) from the package index, as on a fresh
machine. The distributions are installed by docs/quickstart.md's install block as written,
in a fresh copy of the repository (tests/docblocks.py; nothing is built in the checkout).
Every one of this repository's packages, the plugins Snakemake finds and the packaged rule
modules must then come from the environment itself: the checks run from a temporary
directory, with no PYTHONPATH, so nothing can be imported from the checkout.
"""

import json
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.docblocks import Chain, chains, failure

# The fixture's install (six builds and the dependencies from the index) took 1.5-2.5 minutes
# on a loaded 2-core machine: the whole first test, setup included, gets more than the 300 s
# (as much as the runnable-blocks test, which may run that install first).
pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.timeout(1800)]

# In dependency order: the sticky executor and nbrewind require the storage plugin, the sticky
# executor the scheduler plugin (its profiles select it), nbrewind the sticky executor's
# stickyinvoc (its kernels take the process fingerprint around each cell), snakemake-shadho the
# sticky executor's runtime (execution: async runs its trials on sticky workers).
DISTRIBUTIONS = {
    "snakemake-storage-plugin-ckpt": ["snakemake_storage_plugin_ckpt", "ckptstore"],
    "snakemake-scheduler-plugin-incremental": ["snakemake_scheduler_plugin_incremental"],
    "snakemake-executor-plugin-sticky": ["snakemake_executor_plugin_sticky", "stickyinvoc"],
    "snakemake-logger-plugin-distea": ["snakemake_logger_plugin_distea", "distea"],
    "nbrewind": ["nbrewind"],
    "snakemake-shadho": ["snakemake_shadho"],
}
RULE_MODULES = {
    "nbrewind.rules": "notebook",
    "distea.rules": "impact",
    "snakemake_shadho.rules": "hpo",
}

PROBE = textwrap.dedent(
    """
    import importlib, json, sys
    from pathlib import Path

    packages, rule_modules = json.loads(sys.argv[1])
    out = {"files": {}, "typed": {}, "rules": {}, "plugins": {}}
    for name in packages:
        module = importlib.import_module(name)
        out["files"][name] = module.__file__
        out["typed"][name] = (Path(module.__file__).parent / "py.typed").is_file()
    for name, rule in rule_modules.items():
        out["rules"][name] = importlib.import_module(name).smk(rule)
    # What Snakemake's own plugin discovery finds, and where from.
    from snakemake_interface_executor_plugins.registry import ExecutorPluginRegistry
    from snakemake_interface_logger_plugins.registry import LoggerPluginRegistry
    from snakemake_interface_scheduler_plugins.registry import SchedulerPluginRegistry
    from snakemake_interface_storage_plugins.registry import StoragePluginRegistry

    for kind, registry, name in [
        ("executor", ExecutorPluginRegistry(), "sticky"),
        ("storage", StoragePluginRegistry(), "ckpt"),
        ("logger", LoggerPluginRegistry(), "distea"),
        ("scheduler", SchedulerPluginRegistry(), "incremental"),
    ]:
        plugin = registry.get_plugin(name)
        settings = plugin.settings_cls
        out["plugins"][kind] = sys.modules[settings.__module__].__file__
    print(json.dumps(out))
    """
)

TEMPLATES = """\
from stickyinvoc import template


@template("table")
def table():
    return {n: n * n for n in range(100)}
"""

SNAKEFILE = """\
rule all:
    input: expand("out/{n}.txt", n=range(3))

rule square:
    output: "out/{n}.txt"
    resources: sticky="table"
    script: "square.py"
"""

SCRIPT = """\
import stickyinvoc

table = stickyinvoc.state(snakemake)
with open(snakemake.output[0], "w") as f:
    f.write(str(table[int(snakemake.wildcards.n)]) + "\\n")
"""


# The packaged rule modules through Snakemake's `module` directive: the accessor's path as the
# module's snakefile, then `use rule` (all of them under a prefix, or one with changes).
IMPACT_MODULE = """\
from distea.rules import smk as impact_smk

rule all:
    input: "a.txt"

rule a:
    output: "a.txt"
    params: threshold=config.get("threshold", 1)
    shell: "echo {params.threshold} > {output}"

module impact:
    snakefile: impact_smk("impact")
    config: config

use rule * from impact as impact_*
"""

NOTEBOOK_MODULE = """\
from nbrewind.rules import smk as notebook_smk

rule all:
    input: "results/a/model.json"

module notebooks:
    snakefile: notebook_smk("notebook")
    config: config

use rule nbrewind_notebook from notebooks as fit with:
    input:
        notebook="notebooks/fit.ipynb",
        data="data/{sample}.csv",
    output:
        notebook="results/{sample}/fit.ipynb",
        model="results/{sample}/model.json",
    params:
        data=lambda wildcards, input: input.data,
        model=lambda wildcards, output: output.model,
        alpha=1.0,
"""


def _run(cmd, env, cwd=None, timeout=300):
    done = subprocess.run(
        [str(c) for c in cmd], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, f"{cmd} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


def quickstart_order() -> list[str]:
    """The distributions docs/quickstart.md installs, in its order: its first ``bash`` block's
    ``pip install ./plugins/NAME`` lines. Every distribution under plugins/ must be there."""
    text = (REPO / "docs" / "quickstart.md").read_text()
    block = text.split("```bash\n", 1)[1].split("```", 1)[0]
    order = [
        line.split()[2].removeprefix("./plugins/")
        for line in block.splitlines()
        if line.startswith("pip install ./plugins/")
    ]
    on_disk = sorted(p.parent.name for p in (REPO / "plugins").glob("*/pyproject.toml"))
    assert sorted(order) == on_disk == sorted(DISTRIBUTIONS), (order, on_disk)
    return order


def quickstart_install_chain() -> Chain:
    """docs/quickstart.md's install block: the runnable block that installs into a new venv."""
    found = [c for c in chains() if c.id.startswith("docs/quickstart.md:") and c.has("new venv")]
    assert len(found) == 1, [c.id for c in found]
    return found[0]


@pytest.fixture(scope="module")
def venv(docs_sandbox, tmp_path_factory):
    # What the docs tell a user to type, from the folder holding plugins/: docs/quickstart.md's
    # install lines, as written, in a new venv in a fresh copy (issue 31: each distribution
    # installs alone once those before it are in). The runnable-blocks test runs the same
    # block: the sandbox runs it once per session.
    quickstart_order()
    result = docs_sandbox.run(quickstart_install_chain())
    assert result.returncode == 0, failure(result)
    root = result.venv
    assert "include-system-site-packages = false" in (root / "pyvenv.cfg").read_text()
    env = docs_sandbox.env(root)
    away = tmp_path_factory.mktemp("away")
    return root, env, away


def test_every_package_and_its_data_come_from_the_wheels(venv):
    root, env, away = venv
    packages = [p for names in DISTRIBUTIONS.values() for p in names]
    probe = [root / "bin" / "python", "-c", PROBE, json.dumps([packages, RULE_MODULES])]
    out = json.loads(_run(probe, env, cwd=away))
    site = str(root / "lib")
    for name, file in out["files"].items():
        assert file.startswith(site), f"{name} imported from {file}, not from the wheel"
        assert out["typed"][name], f"{name} ships without py.typed"
    for name, path in out["rules"].items():
        assert path.startswith(site) and Path(path).is_file(), (name, path)
    assert (Path(out["rules"]["nbrewind.rules"]).parent / "scripts" / "nbrewind_stage.py").is_file()
    shadho_rules = Path(out["rules"]["snakemake_shadho.rules"]).parent
    assert (shadho_rules / "scripts" / "hpo_trial.py").is_file()
    for kind, file in out["plugins"].items():
        assert file.startswith(site), f"Snakemake found the {kind} plugin at {file}"
    for kernel in ("nbrewind-audit", "nbrewind-repeat"):
        spec = json.loads(
            (root / "share" / "jupyter" / "kernels" / kernel / "kernel.json").read_text()
        )
        assert spec["env"]["NBREWIND_MODE"] == kernel.removeprefix("nbrewind-")
    for dist in DISTRIBUTIONS:
        infos = list(
            (root / "lib").glob(f"python3*/site-packages/{dist.replace('-', '_')}-*.dist-info")
        )
        assert len(infos) == 1, dist
        assert (infos[0] / "licenses" / "LICENSE").is_file(), f"{dist} ships without LICENSE"


def test_snakemake_lists_the_plugins_and_runs_the_executor(venv, tmp_path):
    root, env, away = venv
    python = root / "bin" / "python"
    help_text = _run([python, "-m", "snakemake", "--help"], env, cwd=away)
    for flag in ("--sticky-max-workers", "--storage-ckpt-root", "--logger-distea-dir"):
        assert flag in help_text, flag
    assert "nbrewind" in _run([root / "bin" / "nbrewind", "--help"], env, cwd=away)
    (tmp_path / "sticky_templates.py").write_text(TEMPLATES)
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    (tmp_path / "square.py").write_text(SCRIPT)
    store = tmp_path / "store"
    run = [python, "-m", "snakemake", "--executor", "sticky", "-j", "2", "--scheduler", "greedy"]
    _run([*run, "--sticky-checkpoints", store], env, cwd=tmp_path)
    assert [(tmp_path / "out" / f"{n}.txt").read_text() for n in range(3)] == ["0\n", "1\n", "4\n"]
    assert (store / "FORMAT").read_text().strip() == "ckptstore 1"


def test_a_packaged_rule_module_runs_as_a_snakemake_module(venv, tmp_path):
    """``module impact: snakefile: smk("impact")`` then ``use rule * from impact as impact_*``:
    a run recorded with ``--logger distea``, then the module's report rule on its logs."""
    root, env, _ = venv
    (tmp_path / "Snakefile").write_text(IMPACT_MODULE)
    snakemake = [root / "bin" / "python", "-m", "snakemake", "-j", "1", "--nocolor"]
    _run([*snakemake, "--logger", "distea", "--logger-distea-dir", "traces"], env, cwd=tmp_path)
    rules = sorted(_run([*snakemake, "--list-rules"], env, cwd=tmp_path).split())
    assert rules == ["a", "all", "impact_distea_impact"], rules
    _run(
        [*snakemake, "impact/report.md", "--config", "distea_logs=traces"]
        + ['distea_changes=["param:a.threshold"]'],
        env,
        cwd=tmp_path,
    )
    table = (tmp_path / "impact" / "impact.txt").read_text()
    assert "Impact of param:a.threshold" in table and "a[a.txt]" in table
    assert (tmp_path / "impact" / "report.png").stat().st_size > 1000


def test_a_packaged_notebook_rule_is_used_from_a_snakemake_module(venv, tmp_path):
    """``use rule nbrewind_notebook from notebooks as fit with:`` on the example notebook: the
    stage script is found next to the installed module, and the job runs under the kernel the
    wheel installed."""
    root, env, _ = venv
    example = REPO / "workflows" / "notebook-stage"
    for folder in ("notebooks", "data"):
        shutil.copytree(example / folder, tmp_path / folder)
    (tmp_path / "Snakefile").write_text(NOTEBOOK_MODULE)
    python = root / "bin" / "python"
    _run([python, "-m", "snakemake", "-j", "1", "--nocolor"], env, cwd=tmp_path)
    model = json.loads((tmp_path / "results" / "a" / "model.json").read_text())
    assert model["sample"] == "a" and model["alpha"] == 1.0
    executed = json.loads((tmp_path / "results" / "a" / "fit.ipynb").read_text())
    assert "nbrewind" in executed["metadata"]
    assert (tmp_path / ".nbrewind-stages" / "store").is_dir()
