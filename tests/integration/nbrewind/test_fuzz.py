"""The differential fuzzer in CI: generated notebooks, audited, edited, repeated, and compared
cell by cell (and the final namespace and files) with a fresh stock-kernel run.

``NBREWIND_FUZZ_BATCHES`` x ``NBREWIND_FUZZ_CASES`` cases (default 10 x 50 = 500), each batch one
notebook run three times through real papermill and real kernels. Larger counts: the bench.
"""

import os
from pathlib import Path
from typing import Any

import papermill
import pytest

from .fuzz import run_batch

pytestmark = pytest.mark.integration

BATCHES = int(os.environ.get("NBREWIND_FUZZ_BATCHES", "10"))
CASES = int(os.environ.get("NBREWIND_FUZZ_CASES", "50"))
SEED = int(os.environ.get("NBREWIND_FUZZ_SEED", "1400"))


def quiet_execute(
    source: Path, dest: Path, kernel: str, engine: Any = "nbrewind", cwd: Any = None, **params: Any
) -> Any:
    return papermill.execute_notebook(
        str(source),
        str(dest),
        parameters=params,
        kernel_name=kernel,
        engine_name=engine,
        progress_bar=False,
        request_save_on_cell_execute=False,
        cwd=str(cwd) if cwd else None,
    )


@pytest.mark.parametrize("batch", range(BATCHES))
def test_repeat_equals_a_fresh_stock_run_on_generated_notebooks(batch, tmp_path):
    result = run_batch(SEED + batch, CASES, tmp_path, quiet_execute)
    print(
        f"batch {batch}: {result.cases} cases, {result.executed} cells re-executed "
        f"({result.unnecessary} unnecessary), {result.restored} restored"
    )
    assert not result.divergent_cases and not result.final_diverged, "\n".join(result.details)
    assert result.restored > 0, "a repeat that restores nothing proves nothing"
