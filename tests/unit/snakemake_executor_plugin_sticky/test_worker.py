"""The worker's invocation path, in-process: template states, script execution, errors."""

import dataclasses
import sys
import types
from pathlib import Path

import pytest

import stickyinvoc._access as access
from snakemake_executor_plugin_sticky._protocol import Invoke, StateBuilt, StateFailed, TornDown
from snakemake_executor_plugin_sticky.worker import Worker


class RecordingConn:
    def __init__(self) -> None:
        self.sent: list[object] = []

    def send(self, message: object) -> None:
        self.sent.append(message)


@pytest.fixture
def worker():
    w = Worker(RecordingConn(), "w1")  # type: ignore[arg-type]
    access._bind_worker(w.holder.lookup)  # what Worker.serve() does for its process
    yield w
    access._bind_worker(None)


@pytest.fixture
def templates(tmp_path: Path) -> Path:
    path = tmp_path / "sticky_templates.py"
    path.write_text(
        "from stickyinvoc import template\n"
        "@template('m')\ndef m():\n    return {'calls': 0}\n"
        "@template('bad')\ndef bad():\n    raise KeyError('no weights')\n"
    )
    return path


def invoke(templates: Path, source: str, inv_id: int = 1, template: str = "m") -> Invoke:
    smk = types.SimpleNamespace(rule="r", resources={"sticky": template}, output=[], log=[])
    return Invoke(
        inv_id,
        template,
        str(templates),
        str(templates.parent / "s.py"),
        source,
        str(templates.parent),
        smk,
        isolation="direct",  # in-process: fork mode is tested in tests/integration
    )


def test_state_is_built_once_and_shared_by_invocations(worker, templates):
    src = "import stickyinvoc\nstickyinvoc.state(snakemake)['calls'] += 1\n"
    assert worker.run(invoke(templates, src, 1)).ok
    assert worker.run(invoke(templates, src, 2)).ok
    assert worker.holder.states["m"].value == {"calls": 2}
    assert sum(isinstance(m, StateBuilt) for m in worker.conn.sent) == 1


def test_script_exception_fails_only_that_invocation(worker, templates):
    done = worker.run(invoke(templates, "x = 1\nraise ValueError('bad row')\n"))
    assert not done.ok and "ValueError: bad row" in done.error
    assert 's.py", line 2' in done.error and "worker.py" not in done.error
    assert worker.run(invoke(templates, "pass\n", 2)).ok  # still warm


def test_sys_exit_zero_is_success_and_nonzero_is_failure(worker, templates):
    assert worker.run(invoke(templates, "import sys\nsys.exit(0)\n")).ok
    done = worker.run(invoke(templates, "import sys\nsys.exit(3)\n", 2))
    assert not done.ok and "status 3" in done.error


def test_template_failure_is_reported_once_and_remembered(worker, templates):
    first = worker.run(invoke(templates, "pass\n", 1, "bad"))
    second = worker.run(invoke(templates, "pass\n", 2, "bad"))
    assert first.template_failed and second.template_failed
    failures = [m for m in worker.conn.sent if isinstance(m, StateFailed)]
    assert len(failures) == 2 and "KeyError: 'no weights'" in failures[0].traceback


def test_invocation_cannot_reach_another_templates_state(worker, templates):
    src = "import stickyinvoc\nstickyinvoc.state(snakemake, template='bad')\n"
    done = worker.run(invoke(templates, src))
    assert not done.ok and "is not built in this worker" in done.error


def test_working_directory_is_restored_after_an_invocation(worker, templates, tmp_path):
    import os

    before = os.getcwd()
    assert worker.run(invoke(templates, f"import os\nos.chdir({str(tmp_path)!r})\n")).ok
    assert os.getcwd() == before


def test_a_job_that_changes_what_the_build_created_retires_its_worker(worker, tmp_path):
    """A fresh job builds its own scratch folder; a job that writes into the worker's hands
    that to the next job, so the worker is retired (_template_files); one that only reads it
    is not. (In-process, direct mode's own check also sees the test runner's timers: the
    file check is read on its own.)"""
    path = tmp_path / "sticky_templates.py"
    path.write_text(
        "import tempfile\nfrom stickyinvoc import template\n"
        "@template('m')\ndef m():\n    return {'scratch': tempfile.mkdtemp(prefix='tw-')}\n"
    )
    state = "import os, stickyinvoc\nst = stickyinvoc.state(snakemake)\n"
    reads = worker.run(invoke(path, state + "os.listdir(st['scratch'])\n", 1))
    assert reads.ok and worker.files_checked(dataclasses.replace(reads, retire=None)).retire is None
    writes = worker.run(invoke(path, state + "open(st['scratch'] + '/part', 'w').close()\n", 2))
    scratch = worker.holder.states["m"].value["scratch"]
    assert writes.ok
    reason = worker.files_checked(dataclasses.replace(writes, retire=None)).retire
    assert reason is not None and f"{scratch} (changed)" in reason and "template 'm'" in reason


def test_a_job_after_another_process_changed_what_the_build_read_is_not_run(worker, tmp_path):
    """Another rule's job rewrote a table the template's build read, after the worker's last
    job: the next job is not run on the state built from the old table (red team 25i's
    active_learning_template_reader); it comes back lost and retiring, for a fresh worker."""
    table = tmp_path / "labels.tsv"
    table.write_text("a\n")
    path = tmp_path / "sticky_templates.py"
    path.write_text(
        "from stickyinvoc import template\n"
        "import pathlib\n"
        f"@template('m')\ndef m():\n"
        f"    return {{'labels': pathlib.Path({str(table)!r}).read_text()}}\n"
    )
    script = "import stickyinvoc\nst = stickyinvoc.state(snakemake)\n"
    assert worker.run(invoke(path, script, 1)).ok
    table.write_text("a\nb\n")  # by another process, between the jobs
    done = worker.run(invoke(path, script + "raise SystemExit('must not run')\n", 2))
    assert not done.ok and done.lost is not None and done.retire == done.lost
    assert f"{table} (changed)" in done.lost and "template 'm'" in done.lost


def test_a_template_builds_with_the_scripts_import_path(worker, tmp_path):
    """A fresh job builds its template inside its script, whose sys.path ends with the
    script's folder: a helper module there imports while the template builds (red team 25i's
    template_imports_helper_beside_scripts); the worker's own path is back after it."""
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    (scripts / "helper_25i_unit.py").write_text("VALUE = 'beside the script'\n")
    path = tmp_path / "sticky_templates.py"
    path.write_text(
        "from stickyinvoc import template\n"
        "@template('m')\ndef m():\n    import helper_25i_unit\n"
        "    return {'value': helper_25i_unit.VALUE}\n"
    )
    before = list(sys.path)
    inv = dataclasses.replace(invoke(path, "pass\n"), scriptdir=str(scripts), searchpaths=None)
    try:
        assert worker.run(inv).ok, worker.conn.sent
        assert worker.holder.states["m"].value["value"] == "beside the script"
        assert sys.path == before
    finally:
        sys.modules.pop("helper_25i_unit", None)


def test_a_stopping_worker_names_what_its_teardowns_wrote(worker, tmp_path, monkeypatch):
    """A retired worker tears down while other jobs may run: what its teardown writes is
    reported as a worker's (checkpoints must not blame a non-sticky job for it)."""
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "sticky_templates.py"
    path.write_text(
        "from pathlib import Path\nfrom stickyinvoc import template\n"
        "@template('t')\ndef t():\n    yield {}\n    Path('teardowns').mkdir(exist_ok=True)\n"
        "    Path('teardowns/done').write_text('x')\n"
    )
    assert worker.run(invoke(path, "pass\n", 1, template="t")).ok
    worker.torn_down()
    last = worker.conn.sent[-1]
    assert isinstance(last, TornDown)
    assert "teardowns/done" in last.writes
    assert (tmp_path / "teardowns" / "done").exists() and not worker.holder.states
    worker.torn_down()  # nothing left to tear down: nothing sent
    assert worker.conn.sent[-1] is last
