"""rules/notebook.smk through the example workflow (workflows/notebook-stage/): real Snakemake
jobs running a real notebook through papermill under the audit, then the repeat kernel.

The contract: whatever the job's history, its declared outputs and every cell's outputs are
those of a fresh papermill run of the notebook with the stock kernel and the same parameters.
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .conftest import execute, outputs

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parents[3]
EXAMPLE = REPO / "workflows" / "notebook-stage"


def _copy_example(target: Path) -> Path:
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns("results", ".snakemake"))
    config = yaml.safe_load((target / "config" / "config.yaml").read_text())
    config["samples"] = ["a"]  # one job per run keeps the test short
    (target / "config" / "config.yaml").write_text(yaml.safe_dump(config))
    return target


def snakemake(workdir: Path, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "--cores", "1", "--nocolor", *args],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    return out


def stock(workdir: Path, tmp: Path, alpha: float) -> tuple[object, str]:
    """A fresh papermill run of the notebook under the stock kernel, same parameters."""
    fresh = tmp / f"stock-{alpha}"
    shutil.copytree(workdir / "data", fresh / "data")
    (fresh / "results" / "a").mkdir(parents=True)
    nb = execute(
        workdir / "notebooks" / "fit.ipynb",
        fresh / "fit.ipynb",
        "python3",
        engine=None,
        cwd=fresh,
        sample="a",
        data="data/a.csv",
        model="results/a/model.json",
        alpha=alpha,
    )
    return nb, (fresh / "results" / "a" / "model.json").read_text()


def stage_statuses(workdir: Path) -> dict[str, str]:
    nb = nbformat.read(str(workdir / "results" / "a" / "fit.ipynb"), 4)
    return {
        c.source.splitlines()[0]: c.metadata["nbrewind"]["status"]
        for c in nb.cells
        if c.cell_type == "code"
    }


@pytest.fixture(scope="module")
def workflow(tmp_path_factory):
    """The example, run once: every job audits its notebook."""
    workdir = _copy_example(tmp_path_factory.mktemp("notebook-stage") / "wf")
    out = snakemake(workdir)
    assert out.count("nbrewind stage fit: audit done") == 1, out
    assert (workdir / ".nbrewind-stages" / "notebooks" / "results" / "a" / "fit.ipynb").is_file()
    return workdir


def test_restored_cells_outputs_are_put_back_and_a_changed_input_audits(workflow, tmp_path):
    """Editing a cell whose value comes out the same leaves the writing cell restored: the
    model file Snakemake deleted is put back from the store. A changed data file (read through
    a computed path) makes the job audit the whole notebook. (Runs first: it starts from the
    audited alpha=1.0.)"""
    before = (workflow / "results" / "a" / "model.json").read_text()  # the audit's, alpha=1.0
    notebook = workflow / "notebooks" / "fit.ipynb"
    nb = nbformat.read(str(notebook), 4)
    mse_cell = [c for c in nb.cells if c.source.startswith("mse =")][0]
    mse_cell.source = 'mse = float(np.mean((X @ w - y) ** 2))\nprint(f"MSE: {mse:.5f}")'
    nbformat.write(nb, str(notebook))
    out = snakemake(workflow, "--config", "alpha=1.0")
    assert "nbrewind stage fit: repeat done" in out, out
    status = stage_statuses(workflow)
    assert status["mse = float(np.mean((X @ w - y) ** 2))"] == "executed"
    assert status["summary = {"] == "restored", "its value is unchanged (early cutoff)"
    assert (workflow / "results" / "a" / "model.json").read_text() == before

    data = workflow / "data" / "a.csv"
    data.write_text(data.read_text() + "0.1,0.2,0.3,0.4\n")
    out = snakemake(workflow, "--config", "alpha=1.0")
    assert "input data/a.csv changed since the last run: auditing" in out, out
    assert set(stage_statuses(workflow).values()) == {"executed"}
    fresh, model = stock(workflow, tmp_path, 1.0)
    assert (workflow / "results" / "a" / "model.json").read_text() == model
    nb = nbformat.read(str(workflow / "results" / "a" / "fit.ipynb"), 4)
    assert outputs(nb) == outputs(fresh)


@settings(
    max_examples=2,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(alpha=st.sampled_from([0.0, 0.5, 2.0, 7.5, 40.0]))
def test_a_new_parameter_repeats_the_stage_and_equals_a_fresh_stock_run(
    workflow, tmp_path_factory, alpha
):
    """Snakemake reruns the job for the new `alpha` (a params change); the job repeats the
    notebook from the records kept by the previous run: the data-loading cells are restored,
    and the model file and every cell's outputs equal a fresh stock run's."""
    out = snakemake(workflow, "--config", f"alpha={alpha}")
    if "Nothing to be done" not in out:  # the same alpha as the run before
        assert "nbrewind stage fit: repeat done" in out, out
        status = stage_statuses(workflow)
        assert status['table = np.loadtxt(data, delimiter=",", skiprows=1)'] == "restored"
        assert status["# Summary statistics of the data (independent of alpha)"] == "restored"
    nb = nbformat.read(str(workflow / "results" / "a" / "fit.ipynb"), 4)
    fresh, model = stock(workflow, tmp_path_factory.mktemp("fresh"), alpha)
    assert outputs(nb) == outputs(fresh)
    assert (workflow / "results" / "a" / "model.json").read_text() == model
    assert json.loads(model)["alpha"] == alpha
