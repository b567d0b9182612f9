"""Fork mode: a file the template keeps open is where the template's build left it at every
job's start (a forked child shares the file's position with the template and every other
child; a fresh job opens the file anew). Found by the fourth red team
(``template_file_handle_read_offset_is_shared``)."""

from pathlib import Path

import pytest

from tests.integration.snakemake_executor_plugin_sticky.forked_worker import (
    in_fresh_process,
    in_process_worker,
    invoke_forked,
)

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("raw", [False, True], ids=["file object", "descriptor"])
def test_every_forked_job_reads_the_templates_file_from_where_the_build_left_it(
    tmp_path, raw
) -> None:  # type: ignore[no-untyped-def]
    outputs = in_fresh_process(reads_from_where_the_build_left_it, folder=str(tmp_path), raw=raw)
    assert outputs == ["row 1\n"] * 3


def reads_from_where_the_build_left_it(folder: str, raw: bool) -> list[str]:
    tmp_path = Path(folder)
    data = tmp_path / "rows.txt"
    data.write_text("header\nrow 1\nrow 2\nrow 3\n")
    opener = f"os.open({str(data)!r}, os.O_RDONLY)" if raw else f"open({str(data)!r})"
    skip = "os.read(f, 7)" if raw else "f.readline()"
    templates = tmp_path / "sticky_templates.py"
    templates.write_text(
        "import os\nfrom stickyinvoc import template\n"
        f"@template('t')\ndef t():\n    f = {opener}\n    {skip}\n    return f\n"
    )
    read = "os.read(f, 6).decode()" if raw else "f.readline()"
    source = (
        "import os, stickyinvoc\n"
        "f = stickyinvoc.state(snakemake)\n"
        f"open(snakemake.output[0], 'w').write({read})\n"
    )
    worker = in_process_worker()
    outputs = []
    try:
        for i in range(3):
            out = tmp_path / f"out{i}"
            done = invoke_forked(worker, i, "t", templates, source, out)
            assert done.ok, done.error
            worker.isolation.idle(True)
            outputs.append(out.read_text())
    finally:
        worker.isolation.close()
    return outputs
