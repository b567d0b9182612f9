"""Undeclared writes seen by a real worker's audit hook, in both isolation modes
(integration: fork mode starts a process)."""

from types import SimpleNamespace

import pytest

from snakemake_executor_plugin_sticky import _audit

pytestmark = pytest.mark.integration


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "existing.log").write_text("old\n")
    (tmp_path / "old-side.txt").write_text("x\n")
    return tmp_path


@pytest.mark.parametrize("mode", ["direct", "fork"])
def test_a_real_worker_reports_undeclared_writes_in_both_isolation_modes(workdir, mode):
    """The audit wraps the script's execution inside the isolation: in fork mode the forked
    child's writes are the ones seen, and they come back with its result."""
    from tests.integration.snakemake_executor_plugin_sticky.forked_worker import (
        in_fresh_process,
    )

    assert in_fresh_process(reports_undeclared_writes, folder=str(workdir), mode=mode) == [
        "side.txt"
    ]


def reports_undeclared_writes(folder: str, mode: str) -> list[str]:
    import os
    from pathlib import Path

    import stickyinvoc._access as access
    from snakemake_executor_plugin_sticky._protocol import Invoke
    from tests.integration.snakemake_executor_plugin_sticky.forked_worker import (
        in_process_worker,
    )

    workdir = Path(folder)
    os.chdir(workdir)

    templates = workdir / "sticky_templates.py"
    templates.write_text(
        "from stickyinvoc import template\n@template('m')\ndef m():\n    return 1\n"
    )
    source = (
        "with open(snakemake.output[0], 'w') as f:\n    f.write('out\\n')\n"
        "with open('side.txt', 'a') as f:\n    f.write('side\\n')\n"
        "open('scratch.tmp', 'w').close()\n"
        "import os\nos.remove('scratch.tmp')\n"
    )
    smk = SimpleNamespace(rule="r", resources={"sticky": "m"}, output=["out.txt"], log=[])
    worker = in_process_worker()
    try:
        inv = Invoke(
            1, "m", str(templates), str(workdir / "s.py"), source, str(workdir), smk,
            isolation=mode, workdir=str(workdir), searchpaths=[],
        )  # fmt: skip
        done = worker.run(inv)
        assert worker.mode(inv) == mode, worker.hazards  # fork mode ran forked
    finally:
        worker.isolation.close()
        access._bind_worker(None)
    assert done.ok, done.error
    assert done.undeclared_writes == ["side.txt"]
    assert (workdir / "out.txt").read_text() == "out\n"
    assert _audit.stop() == []  # nothing left watching in the worker
    return list(done.undeclared_writes)
