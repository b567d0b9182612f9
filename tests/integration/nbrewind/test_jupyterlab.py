"""The audit kernel as JupyterLab drives it: a real kernel, execute requests with cell ids and
JPY_SESSION_NAME as jupyter_server sets them; then `import-lab` and a papermill repeat."""

import base64
import hashlib
import json
import os
import pickle
import platform
import time
from collections.abc import Callable
from pathlib import Path
from queue import Empty
from typing import Any

import nbformat
import pytest
from jupyter_client.manager import KernelManager

from nbrewind import import_lab
from nbrewind._dataflow import source_hash
from nbrewind._notebook import lab_records_path

from .conftest import execute, make_notebook, statuses, stdout

pytestmark = pytest.mark.integration

CELLS = ["base = 20", "values = [base, 1]\nvalues.append(21)", "total = sum(values)\nprint(total)"]


def reply_to(request: dict[str, Any], get: Callable[..., dict[str, Any]]) -> dict[str, Any]:
    """The next message on a channel whose parent is ``request``: messages of other requests
    (the kernel_info replies and statuses of ``wait_for_ready``, which may arrive late) are
    skipped, never taken for this request's reply."""
    deadline = time.monotonic() + 120
    while True:
        left = deadline - time.monotonic()
        try:
            if left <= 0:
                raise Empty
            message = get(timeout=left)
        except Empty:
            raise AssertionError(f"no reply to {request['msg_type']} within 120 s") from None
        if message["parent_header"].get("msg_id") == request["header"]["msg_id"]:
            return message


def run_like_jupyterlab(notebook: Path) -> None:
    """Execute every cell as JupyterLab does (cellId in the request metadata), then save the
    notebook with its outputs, as the user would."""
    nb = nbformat.read(str(notebook), as_version=4)
    km = KernelManager(kernel_name="nbrewind-audit")
    km.start_kernel(cwd=str(notebook.parent), env={**os.environ, "JPY_SESSION_NAME": str(notebook)})
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=60)
        for cell in nb.cells:
            content = {
                "code": cell.source,
                "silent": False,
                "store_history": True,
                "user_expressions": {},
                "allow_stdin": False,
                "stop_on_error": True,
            }
            msg = kc.session.msg("execute_request", content, metadata={"cellId": cell.id})
            kc.shell_channel.send(msg)
            reply = reply_to(msg, kc.get_shell_msg)
            assert reply["msg_type"] == "execute_reply", reply["msg_type"]
            assert reply["content"]["status"] == "ok", reply["content"]
            cell.execution_count = reply["content"]["execution_count"]
            cell.outputs = []
            # The cell's outputs: every iopub message of this request, up to its idle status.
            while True:
                out = reply_to(msg, kc.get_iopub_msg)
                kind = out["msg_type"]
                if kind == "status" and out["content"]["execution_state"] == "idle":
                    break
                if kind in ("stream", "execute_result", "display_data", "error"):
                    cell.outputs.append(nbformat.v4.output_from_msg(out))
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    nbformat.write(nb, str(notebook))


def test_records_kept_under_jupyterlab_are_imported_and_repeat_restores(tmp_path):
    notebook = make_notebook(tmp_path / "lab.ipynb", CELLS)
    run_like_jupyterlab(notebook)
    saved = nbformat.read(str(notebook), as_version=4)
    assert all("nbrewind" not in c.metadata for c in saved.cells), "Lab itself writes nothing"
    assert stdout(saved.cells[-1]) == "42\n"

    assert import_lab(notebook) == {"imported": 3, "stale": 0, "missing": 0, "refused": 0}
    imported = nbformat.read(str(notebook), as_version=4)
    record = imported.cells[1].metadata["nbrewind"]
    assert set(record["writes"]) == {"values"} and record["mutated"] == []
    assert record["reads"].keys() == {"base"} and record["sig"].startswith("hmac-sha256:")

    nb = execute(
        notebook,
        tmp_path / "again.ipynb",
        "nbrewind-repeat",
        cwd=tmp_path,
    )
    assert {s for s, _ in statuses(nb).values()} == {"restored"}
    assert stdout(nb.cells[-1]) == "42\n"


def test_records_planted_in_the_sidecar_are_never_unpickled(tmp_path):
    """A sidecar that arrived with a cloned repository: its records carry no MAC of this user's
    kernel. import-lab refuses them, so the repeat re-executes the cell instead of unpickling
    the attacker's checkpoint (on the old code the planted __reduce__ ran as the user)."""
    marker = tmp_path / "pwned"
    notebook = make_notebook(tmp_path / "cloned.ipynb", ["n = 1", "x = 2", "print(x + n)"])
    nb = nbformat.read(str(notebook), as_version=4)
    evil = pickle.dumps(_Evil(marker))
    digest = "sha256:" + hashlib.sha256(evil).hexdigest()
    record = {
        "status": "executed",
        "reads": {},
        "files_read": {},
        "writes": {
            "x": {
                "kind": "pickle",
                "hash": digest,
                "type": "builtins.int",
                "digest": digest,
                "inline": base64.b64encode(evil).decode(),
            }
        },
        "deleted": [],
        "python": ".".join(platform.python_version_tuple()[:2]),
        "packages": {},
    }
    # Only the record of "x = 2": the reader has none, so it runs and needs x.
    lines = [{"cell_id": nb.cells[1].id, "source": source_hash("x = 2"), "record": record}]
    sidecar = lab_records_path(notebook)
    sidecar.parent.mkdir(parents=True)
    sidecar.write_text("".join(json.dumps(line) + "\n" for line in lines))
    counts = import_lab(notebook)

    out = execute(notebook, tmp_path / "again.ipynb", "nbrewind-repeat", cwd=tmp_path, n=5)
    assert not marker.exists(), "the planted pickle was loaded"
    assert counts["imported"] == 0 and counts["refused"] == 1
    assert statuses(out)["x = 2"] == ("executed", "no checkpoint for this cell")
    assert stdout(out.cells[-1]) == "7\n"


class _Evil:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):  # noqa: ANN204
        return (os.system, (f"touch {self.marker}",))


def test_import_lab_without_records_says_what_to_do(tmp_path):
    from nbrewind import NotebookError

    notebook = make_notebook(tmp_path / "never.ipynb", ["x = 1"])
    with pytest.raises(NotebookError, match="run the notebook in JupyterLab"):
        import_lab(notebook)
