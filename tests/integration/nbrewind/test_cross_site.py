"""Portable across sites: a site with only the packed ``.ipynb`` and its store repeats it as a
fresh run would, and a workflow cell that fails fails its cell with the workflow's error.

Real papermill, real kernels, real Snakemake. On the old code the site without the input
file counted it as changed, re-executed the reader and crashed with FileNotFoundError, and a
failing ``!snakemake`` was silent (the next cell crashed instead)."""

import shutil
from pathlib import Path

import nbformat
import papermill
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nbrewind import pack

from .conftest import execute, make_notebook, outputs, statuses, stdout

pytestmark = pytest.mark.integration

CELLS = [
    "scale = 1",
    "import statistics",
    'raw = [float(v) for v in open("data/raw.txt").read().split()]',
    "scaled = [v * scale for v in raw]",
    "print(round(sum(scaled), 6), round(statistics.fmean(raw), 6), len(raw))",
]
READER = 'raw = [float(v) for v in open("data/raw.txt").read().split()]'


@settings(
    max_examples=2,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    numbers=st.lists(st.integers(-1000, 1000), min_size=1, max_size=20),
    scales=st.tuples(st.integers(1, 9), st.integers(1, 9)),
)
def test_a_site_with_only_the_packed_notebook_repeats_as_a_fresh_run(
    tmp_path_factory, numbers, scales
):
    """Audit at site A with a generated input file, `pack --bundle --with-inputs` to site B,
    which has nothing else; repeat there with another parameter; compare every cell's outputs
    with a fresh stock run at site A with that parameter."""
    first, second = scales
    a, b = tmp_path_factory.mktemp("site-a"), tmp_path_factory.mktemp("site-b")
    (a / "data").mkdir()
    (a / "data" / "raw.txt").write_text(" ".join(map(str, numbers)) + "\n")
    source = make_notebook(a / "in.ipynb", CELLS)
    execute(source, a / "audited.ipynb", "nbrewind-audit", cwd=a, scale=first)
    counts = pack(a / "audited.ipynb", b / "nb.ipynb", bundle=True, with_inputs=True)
    assert counts["inputs"] == 1 and counts["inputs_skipped"] == 0
    assert sorted(p.name for p in b.iterdir()) == [".nbrewind", "nb.ipynb"]

    repeat = execute(b / "nb.ipynb", b / "again.ipynb", "nbrewind-repeat", cwd=b, scale=second)
    stock = execute(source, a / "stock.ipynb", "python3", engine=None, cwd=a, scale=second)
    assert outputs(repeat) == outputs(stock)
    status = statuses(repeat)
    assert status[READER][0] == "restored", status[READER]
    assert (b / "data" / "raw.txt").read_bytes() == (a / "data" / "raw.txt").read_bytes()


def test_a_missing_input_that_was_not_bundled_is_named_and_fails_as_a_fresh_run(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    (a / "data").mkdir(parents=True)
    (a / "data" / "raw.txt").write_text("1 2 3\n")
    source = make_notebook(a / "in.ipynb", CELLS)
    execute(source, a / "audited.ipynb", "nbrewind-audit", cwd=a)
    pack(a / "audited.ipynb", b / "nb.ipynb", bundle=True)
    with pytest.raises(papermill.PapermillExecutionError) as failed:
        execute(b / "nb.ipynb", b / "again.ipynb", "nbrewind-repeat", cwd=b)
    assert failed.value.ename == "FileNotFoundError", "what a fresh run at B does"
    reader = [c for c in nbformat.read(str(b / "again.ipynb"), 4).cells if c.source == READER][0]
    assert "data/raw.txt, which is missing here" in reader.metadata["nbrewind"]["reason"]
    assert "--with-inputs" in reader.metadata["nbrewind"]["reason"]


WRITER_CELLS = [
    "scale = 1",
    "import os\nos.makedirs('work', exist_ok=True)",
    "rows = open(os.path.join('data', 'raw.txt')).read().split()\n"
    "with open('work/' + 'clean.txt', 'w') as f:\n"
    "    f.write('\\n'.join(rows))",
    "print(scale * len(open('work/clean.txt').read().split()))",
]


def test_a_packed_writer_restores_at_the_other_site_and_puts_its_file_back(tmp_path):
    """Record format 2 across sites: the input read through a computed path is bundled, the
    file a cell wrote travels in the store, so at site B the writer is restored (its file put
    back) and its reader re-executes with the new parameter as a fresh run would."""
    a, b = tmp_path / "a", tmp_path / "b"
    (a / "data").mkdir(parents=True)
    (a / "data" / "raw.txt").write_text("1 2 3 4\n")
    source = make_notebook(a / "in.ipynb", WRITER_CELLS)
    execute(source, a / "audited.ipynb", "nbrewind-audit", cwd=a)
    counts = pack(a / "audited.ipynb", b / "nb.ipynb", bundle=True, with_inputs=True)
    assert counts["inputs"] == 1 and counts["files_written"] == 1, counts
    repeat = execute(b / "nb.ipynb", b / "again.ipynb", "nbrewind-repeat", cwd=b, scale=3)
    status = statuses(repeat)
    writer, reader = (status[cell.splitlines()[0]] for cell in WRITER_CELLS[2:])
    assert writer[0] == "restored", writer
    assert reader[0] == "executed", reader
    assert (b / "work" / "clean.txt").read_text() == (a / "work" / "clean.txt").read_text()
    assert stdout(repeat.cells[-1]) == "12\n"


SNAKEFILE = """
rule all:
    input: "results/upper.txt"

rule upper:
    input: "data/in.txt"
    output: "results/upper.txt"
    shell: "{command}"
"""
PIPED = (
    "!{sys.executable} -m snakemake --executor sticky --sticky-checkpoints ckpt "
    "--cores 1 --nocolor all 2>&1 | grep 'checkpoints:'"
)
PLAIN = "!{sys.executable} -m snakemake --cores 1 --nocolor all"


def _workflow_site(path: Path, command: str) -> Path:
    (path / "data").mkdir(parents=True)
    (path / "data" / "in.txt").write_text("hello\n")
    (path / "Snakefile").write_text(SNAKEFILE.format(command=command))
    return path


def _cells(workflow: str) -> list[str]:
    return ["n = 1", "import sys", workflow, 'text = open("results/upper.txt").read()\nprint(text)']


def test_a_failing_workflow_fails_its_cell_with_the_workflows_error_even_through_a_pipe(
    tmp_path,
):
    site = _workflow_site(tmp_path / "a", "echo boom >&2; exit 3")
    source = make_notebook(site / "in.ipynb", _cells(PIPED))
    with pytest.raises(papermill.PapermillExecutionError) as failed:
        execute(source, site / "out.ipynb", "nbrewind-audit", cwd=site)
    assert failed.value.ename == "WorkflowFailed", failed.value.ename
    assert "Error in rule upper" in failed.value.evalue
    assert "exit 3" in failed.value.evalue and ".snakemake/log/" in failed.value.evalue
    nb = nbformat.read(str(site / "out.ipynb"), 4)
    cells = {c.source: c for c in nb.cells if c.cell_type == "code"}
    assert cells[PIPED].metadata["nbrewind"]["status"] == "error", [
        (c.source[:20], c.metadata) for c in nb.cells
    ]
    reader = cells[_cells(PIPED)[-1]]
    assert reader.outputs == [] and reader.metadata["nbrewind"]["status"] == "not-run"


def test_at_a_site_without_the_workflow_the_workflow_cell_fails_with_snakemakes_error(tmp_path):
    """Site B has only the packed notebook and its store: the workflow cell re-executes (as it
    always does) and fails with Snakemake's message, not silently."""
    a, b = _workflow_site(tmp_path / "a", "tr a-z A-Z < {input} > {output}"), tmp_path / "b"
    source = make_notebook(a / "in.ipynb", _cells(PLAIN))
    audit = execute(source, a / "audited.ipynb", "nbrewind-audit", cwd=a)
    assert stdout(audit.cells[-1]) == "HELLO\n\n"
    pack(a / "audited.ipynb", b / "nb.ipynb", bundle=True, with_inputs=True)
    shutil.rmtree(a)
    with pytest.raises(papermill.PapermillExecutionError) as failed:
        execute(b / "nb.ipynb", b / "again.ipynb", "nbrewind-repeat", cwd=b)
    assert failed.value.ename == "WorkflowFailed"
    assert "No Snakefile found" in failed.value.evalue
    assert "exited with status 1" in failed.value.evalue
