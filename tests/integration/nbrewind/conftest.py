"""Real kernels through real papermill: make sure both are found, whatever the install.

CI installs the project editable and then runs ``nbrewind install-kernels``; a developer may
run the tests with ``PYTHONPATH=plugins`` and nothing installed. Either way the kernels must be
discoverable and the kernel processes must import this checkout's ``nbrewind``.
"""

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import nbformat
import papermill
import pytest
from jupyter_client.kernelspec import KernelSpecManager
from papermill.engines import papermill_engines

from nbrewind import KERNEL_NAMES
from nbrewind._engine import NBRewindEngine
from nbrewind._install import kernelspec_dirs
from tests.conftest import PLUGINS_PATH
from tests.integration.nbrewind.fuzz import cell_outputs


@pytest.fixture(scope="module", autouse=True)
def restore_environment() -> Iterator[None]:
    """The fixtures below change os.environ (kernels inherit it): undo that after the module."""
    names = ("PYTHONPATH", "JUPYTER_PATH", "NBREWIND_KEY_FILE", "NBREWIND_STORE")
    saved = {k: os.environ.get(k) for k in names}
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="module", autouse=True)
def nbrewind_kernels(restore_environment: None, tmp_path_factory: pytest.TempPathFactory) -> None:
    os.environ["PYTHONPATH"] = os.pathsep.join(
        p for p in (PLUGINS_PATH, os.environ.get("PYTHONPATH")) if p
    )
    found = KernelSpecManager().find_kernel_specs()
    if not all(name in found for name in KERNEL_NAMES):
        data = tmp_path_factory.mktemp("jupyter")
        for name, path in kernelspec_dirs().items():
            shutil.copytree(path, data / "kernels" / name)
        os.environ["JUPYTER_PATH"] = os.pathsep.join(
            p for p in (str(data), os.environ.get("JUPYTER_PATH")) if p
        )
    if "nbrewind" not in papermill_engines._engines:  # not installed: register in-process
        papermill_engines.register("nbrewind", NBRewindEngine)


@pytest.fixture(scope="module", autouse=True)
def signing_key(restore_environment: None, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One key per test module (this user's), never the real ~/.local/share one."""
    key = tmp_path_factory.mktemp("keys") / "key"
    os.environ["NBREWIND_KEY_FILE"] = str(key)
    os.environ.pop("NBREWIND_STORE", None)
    return key


def make_notebook(path: Path, cells: list[str]) -> Path:
    """A notebook whose first cell is tagged ``parameters``."""
    nb = nbformat.v4.new_notebook()
    for i, source in enumerate(cells):
        cell = nbformat.v4.new_code_cell(source)
        if i == 0:
            cell.metadata["tags"] = ["parameters"]
        nb.cells.append(cell)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, str(path))
    return path


def execute(
    source: Path,
    dest: Path,
    kernel: str,
    engine: "str | None" = "nbrewind",
    cwd: "Path | None" = None,
    **parameters: Any,
) -> Any:
    return papermill.execute_notebook(
        str(source),
        str(dest),
        parameters=parameters,
        kernel_name=kernel,
        engine_name=engine,
        progress_bar=False,
        cwd=str(cwd) if cwd else None,
    )


def statuses(nb: Any) -> dict[str, tuple[str, str]]:
    """First line of each code cell -> (status, reason)."""
    out = {}
    for cell in nb.cells:
        if cell.cell_type == "code":
            record = cell.metadata.get("nbrewind", {})
            out[cell.source.splitlines()[0]] = (record.get("status"), record.get("reason"))
    return out


def executed(nb: Any) -> set[str]:
    return {k for k, (status, _) in statuses(nb).items() if status == "executed"}


def outputs(nb: Any) -> list[Any]:
    """Cell outputs without execution counts (they are renumbered by design), stream chunks
    joined (:func:`tests.integration.nbrewind.fuzz.cell_outputs`)."""
    return [
        cell_outputs(cell, drop=("execution_count",))
        for cell in nb.cells
        if cell.cell_type == "code" and "injected-parameters" not in cell.metadata.get("tags", [])
    ]


def stdout(cell: Any) -> str:
    """What a cell printed to stdout, whatever chunks the kernel sent it in."""
    return "".join(
        o["text"]
        for o in cell.outputs
        if o.get("output_type") == "stream" and o.get("name") == "stdout"
    )


@pytest.fixture
def run() -> Callable[..., Any]:
    return execute
