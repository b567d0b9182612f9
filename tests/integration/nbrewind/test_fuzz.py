"""The differential fuzzer in CI: generated notebooks, audited, edited, repeated, and compared
cell by cell (and the final namespace and files) with a fresh stock-kernel run.

``NBREWIND_FUZZ_BATCHES`` x ``NBREWIND_FUZZ_CASES`` cases (default 5 x 50 = 250, sized to
CI's time), each batch one notebook run three times through real papermill and real kernels.
Larger counts: ``python bench/nbrewind_fuzz.py``.
"""

import os

import pytest

from .fuzz import run_batch

pytestmark = pytest.mark.integration

BATCHES = int(os.environ.get("NBREWIND_FUZZ_BATCHES", "5"))
CASES = int(os.environ.get("NBREWIND_FUZZ_CASES", "50"))
SEED = int(os.environ.get("NBREWIND_FUZZ_SEED", "1400"))


@pytest.mark.parametrize("batch", range(BATCHES))
def test_repeat_equals_a_fresh_stock_run_on_generated_notebooks(batch, tmp_path):
    result = run_batch(SEED + batch, CASES, tmp_path)
    print(
        f"batch {batch}: {result.cases} cases, {result.executed} cells re-executed "
        f"({result.unnecessary} unnecessary), {result.restored} restored"
    )
    assert not result.divergent_cases and not result.final_diverged, "\n".join(result.details)
    assert result.restored > 0, "a repeat that restores nothing proves nothing"
