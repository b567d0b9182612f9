"""Each distribution under plugins/ builds on its own into a wheel that installs and works.

The wheels are built from copies of the distribution folders (so a build cannot read files
outside its own folder, and leaves no build/ or egg-info in the checkout), with
``pip wheel --no-deps --no-build-isolation``, and installed into a fresh virtual environment.
Nothing may download here, so the environment sees the system site-packages for the
third-party dependencies (Snakemake, papermill, ...); every one of this repository's packages
must then be imported from the environment itself, not from the checkout.
"""

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = [pytest.mark.integration, pytest.mark.slow]

# In dependency order: the sticky executor and nbrewind require the storage plugin, the sticky
# executor the scheduler plugin (its profiles select it).
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


def _run(cmd, env, cwd=None, timeout=300):
    done = subprocess.run(
        [str(c) for c in cmd], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, f"{cmd} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done.stdout


@pytest.fixture(scope="module")
def venv(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("wheels")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "JUPYTER_PATH")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    wheels = tmp / "wheels"
    for dist in DISTRIBUTIONS:
        shutil.copytree(
            REPO / "plugins" / dist,
            tmp / "src" / dist,
            ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"),
        )
    pip = [sys.executable, "-m", "pip"]
    build = [*pip, "wheel", "--quiet", "--no-deps", "--no-build-isolation", "-w", wheels]
    _run([*build, *(tmp / "src" / dist for dist in DISTRIBUTIONS)], env)
    built = sorted(p.name for p in wheels.glob("*.whl"))
    assert len(built) == len(DISTRIBUTIONS), built
    root = tmp / "venv"
    _run([sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", root], env)
    # --no-index: the dependencies between the six come from the wheels, the third-party
    # ones must already be there; pip refuses if a declared dependency is missing.
    install = [*pip, "--python", root / "bin" / "python", "install", "--quiet", "--no-index"]
    _run([*install, "--find-links", wheels, *(wheels / name for name in built)], env)
    return root, env


def test_every_package_and_its_data_come_from_the_wheels(venv):
    root, env = venv
    packages = [p for names in DISTRIBUTIONS.values() for p in names]
    out = json.loads(
        _run([root / "bin" / "python", "-c", PROBE, json.dumps([packages, RULE_MODULES])], env)
    )
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
    root, env = venv
    python = root / "bin" / "python"
    help_text = _run([python, "-m", "snakemake", "--help"], env)
    for flag in ("--sticky-max-workers", "--storage-ckpt-root", "--logger-distea-dir"):
        assert flag in help_text, flag
    assert "nbrewind" in _run([root / "bin" / "nbrewind", "--help"], env)
    (tmp_path / "sticky_templates.py").write_text(TEMPLATES)
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    (tmp_path / "square.py").write_text(SCRIPT)
    store = tmp_path / "store"
    run = [python, "-m", "snakemake", "--executor", "sticky", "-j", "2", "--scheduler", "greedy"]
    _run([*run, "--sticky-checkpoints", store], env, cwd=tmp_path)
    assert [(tmp_path / "out" / f"{n}.txt").read_text() for n in range(3)] == ["0\n", "1\n", "4\n"]
    assert (store / "FORMAT").read_text().strip() == "ckptstore 1"
