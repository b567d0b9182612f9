"""A notebook cell that runs a Snakemake workflow with checkpoint-aware rule skipping.

Under repeat the workflow cell always runs, and the sticky executor's checkpoint store decides
which jobs run: at another site with the same store every job is restored; after an input
changes only the affected jobs run. The cell's record lists the files the workflow produced,
with their hashes, and cells reading those files depend on them.
"""

import shutil
from pathlib import Path

import nbformat
import pytest

from ckptstore import file_digest

from .conftest import execute, executed, make_notebook, statuses

pytestmark = pytest.mark.integration

SNAKEFILE = """
rule all:
    input: "results/upper.txt", "results/count.txt"

rule upper:
    input: "data/in.txt"
    output: "results/upper.txt"
    shell: "tr a-z A-Z < {input} > {output}"

rule count:
    input: "results/upper.txt"
    output: "results/count.txt"
    shell: "wc -w < {input} > {output}"
"""
WORKFLOW = (
    "!{sys.executable} -m snakemake --executor sticky --sticky-checkpoints {store} "
    "--cores 1 --nocolor --latency-wait 3 all 2>&1 | grep 'checkpoints:'"
)
CELLS = [
    'store = "ckpt"',
    "import sys",
    WORKFLOW,
    'text = open("results/upper.txt").read().strip()\nprint(text)',
    'n_words = int(open("results/count.txt").read())\nn_words',
    'shout = text + "!"\nprint(shout)',
]


def printed(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs)


def site(path: Path, text: str) -> Path:
    (path / "data").mkdir(parents=True)
    (path / "data" / "in.txt").write_text(text)
    (path / "Snakefile").write_text(SNAKEFILE)
    return path


def run(source: Path, dest: Path, kernel: str, store: Path):
    return execute(
        source,
        dest,
        kernel,
        cwd=dest.parent,
        store=str(store),
    )


def test_workflow_cell_records_outputs_and_reruns_only_changed_jobs(tmp_path):
    store = tmp_path / "workflow-checkpoints"
    site_a = site(tmp_path / "a", "hello snakemake world\n")
    make_notebook(site_a / "in.ipynb", CELLS)
    audit = run(site_a / "in.ipynb", site_a / "out.ipynb", "nbrewind-audit", store)
    wf = [c for c in audit.cells if c.source == WORKFLOW][0]
    record = wf.metadata["nbrewind"]
    assert record["workflow"] is True
    assert record["files_written"] == {
        "results/upper.txt": file_digest(site_a / "results" / "upper.txt"),
        "results/count.txt": file_digest(site_a / "results" / "count.txt"),
    }
    assert "0 job(s) restored, 2 stored" in printed(wf)
    reader = [c for c in audit.cells if c.source.startswith("text =")][0].metadata["nbrewind"]
    assert reader["files_read"] == {
        "results/upper.txt": record["files_written"]["results/upper.txt"]
    }

    # Another site: the workflow and the notebook only (no outputs), the same checkpoint store.
    site_b = site(tmp_path / "b", "hello snakemake world\n")
    shutil.copy(site_a / "out.ipynb", site_b / "audited.ipynb")
    nb = run(site_b / "audited.ipynb", site_b / "repeat.ipynb", "nbrewind-repeat", store)
    assert executed(nb) == {"# Parameters", WORKFLOW}
    wf = [c for c in nb.cells if c.source == WORKFLOW][0]
    assert "2 job(s) restored, 0 stored" in printed(wf)
    assert "Snakemake workflow" in wf.metadata["nbrewind"]["reason"]
    assert (site_b / "results" / "upper.txt").read_text() == "HELLO SNAKEMAKE WORLD\n"

    # Nothing to do for the workflow: its record still lists the outputs, as they are now.
    nb = run(site_b / "repeat.ipynb", site_b / "idle.ipynb", "nbrewind-repeat", store)
    wf = [c for c in nb.cells if c.source == WORKFLOW][0]
    assert "0 job(s) restored, 0 stored" in printed(wf)
    assert wf.metadata["nbrewind"]["files_written"] == record["files_written"]

    # An input of the workflow changes: its jobs run, and the cells reading its outputs.
    (site_b / "data" / "in.txt").write_text("goodbye\n")
    nb = run(site_b / "repeat.ipynb", site_b / "changed.ipynb", "nbrewind-repeat", store)
    status = statuses(nb)
    wf = [c for c in nb.cells if c.source == WORKFLOW][0]
    assert "0 job(s) restored, 2 stored" in printed(wf)
    assert status['text = open("results/upper.txt").read().strip()'][1] == (
        "reads file results/upper.txt, which changed"
    )
    assert executed(nb) == {
        "# Parameters",
        WORKFLOW,
        'text = open("results/upper.txt").read().strip()',
        'n_words = int(open("results/count.txt").read())',
        'shout = text + "!"',
    }
    shout = [c for c in nb.cells if c.source.startswith("shout")][0]
    # ipykernel may send one print as two stream messages (its flush timer); nbclient keeps both
    assert printed(shout) == "GOODBYE!\n"
    final = nbformat.read(str(site_b / "changed.ipynb"), as_version=4)
    assert final.metadata["nbrewind"]["cells"] == {"executed": 5, "restored": 2}
