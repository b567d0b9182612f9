"""Issue 28's red team, kept as tests: changes a helper that saw only docs/distea.md found
DISTEA missing (or over-reporting) on ``shardtext``, the subject that helper wrote. Each change
is really applied and the workflow re-run; every job whose outputs changed must be in the
answer the base run's logs give (recall 1.0), without a warning.

First pass (commit e371df5): 4 of 9 cases missed really-changed jobs silently (a templates
file's functions "never ran"; a config file's keys read by scripts), 1 over-reported through a
Snakemake subprocess's own listing of the workflow directory.
"""

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from distea import Change, analyse, read_logs
from tests.conftest import PLUGINS_PATH

SUBJECT = Path(__file__).resolve().parents[3] / "bench" / "distea_eval" / "subjects" / "shardtext"

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

# (change asked, file, old text, new text, jobs that must NOT be in the answer)
CASES = {
    "template helper": (
        "func:sticky_templates.boosted", "sticky_templates.py", "factor=1.25", "factor=1.5", (),
    ),
    "template builder": (
        "func:sticky_templates.lexicon", "sticky_templates.py", "damping=0.8", "damping=1.6", (),
    ),
    "config key read by scripts": (
        "file:config.yaml", "config.yaml", "size: 12", "size: 10", (),
    ),
    "config key choosing a partial": (
        "file:config.yaml", "config.yaml", "normalizer: stem", "normalizer: strict", (),
    ),
    "function only in Pool children": (
        "func:textkit.metrics.confidence_band", "textkit/metrics.py", "0.5", "0.6",
        ("vocab[model/vocab.json]", "train[model/nb.json]"),
    ),
    "function in a python -m tool": (
        "func:textkit.features.long_ratio", "textkit/features.py", "> 7", "> 6", (),
    ),
    "input data file": ("file:data/sports.txt", "data/sports.txt", "weight=3", "weight=4", ()),
    "params.get default": ("param:clean.min_len", "Snakefile", '"min_len", 3', '"min_len", 4', ()),
    "run: block key": (
        "config:model.min_count", "config.yaml", "min_count: 2", "min_count: 3", (),
    ),
}  # fmt: skip


def _env(workdir: Path, traces: "Path | None") -> dict[str, str]:
    paths = [PLUGINS_PATH, str(workdir), os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
    env["PYTHONHASHSEED"] = "0"
    env.pop("DISTEA_TRACE", None)
    if traces is not None:
        env["DISTEA_TRACE"] = str(traces)
    return env


def _run(workdir: Path, traced: bool) -> None:
    traces = workdir / "traces"
    cmd = [sys.executable, "-m", "snakemake", "--executor", "sticky", "-j", "1", "--forceall"]
    cmd += ["--nocolor"]
    if traced:
        cmd += ["--logger", "distea", "--logger-distea-dir", str(traces)]
    proc = subprocess.run(
        cmd, cwd=workdir, env=_env(workdir, traces if traced else None), capture_output=True,
        text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]


def _digest(path: Path) -> str:
    h = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for f in files:
        if f.name.startswith(".snakemake"):
            continue
        h.update(str(f.relative_to(path.parent)).encode() + f.read_bytes())
    return h.hexdigest() if path.exists() else "absent"


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    workdir = tmp_path_factory.mktemp("shardtext") / "base"
    shutil.copytree(SUBJECT, workdir)
    _run(workdir, traced=True)
    return workdir


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_really_changed_job_is_in_the_answer(base, tmp_path, case):
    change, name, old, new, absent = CASES[case]
    mutant = tmp_path / "m"
    shutil.copytree(base, mutant, ignore=shutil.ignore_patterns("traces", ".snakemake"))
    _edit(mutant / name, old, new)
    _run(mutant, traced=False)
    jobs = {k: j for k, j in read_logs(base / "traces").jobs.items() if j.outputs}
    changed = {
        key
        for key, job in jobs.items()
        if any(_digest(base / p) != _digest(mutant / p) for p, _ in job.outputs)
    }
    assert changed, f"{case}: the change changed nothing (not a useful case)"
    # The question is asked where the user edits: the workflow directory of the logged run.
    original = (base / name).read_text()
    _edit(base / name, old, new)
    try:
        result = analyse(base / "traces", [Change.parse(change)])
    finally:
        (base / name).write_text(original)
    answered = {j.name for j in result.jobs}
    assert changed <= answered, f"{case}: missed {sorted(changed - answered)}"
    assert not answered & set(absent), f"{case}: over-reported {sorted(answered & set(absent))}"
    assert result.warnings == [], result.warnings
