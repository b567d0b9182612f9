"""Generated differential test of checkpoint-aware rule skipping (issue 13, part 6).

Random workflows (see ``ckpt_differential``), random edits; after each edit a run with the
store at a new site must leave byte-identical outputs (kinds, modes, link targets included) to
a fresh run without it, and rerun no job whose dependencies did not change.

Sized for CI: ``CKPT_DIFF_SUBS`` sub-workflows edited at once per round, rounds until at
least ``CKPT_DIFF_CASES`` cases (default 150: 25 x 6 rounds plus the first run, sized to
CI's time). Larger counts
and more seeds: ``python bench/checkpoint_differential.py``.
"""

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import ckpt_differential as cd  # noqa: E402

pytestmark = pytest.mark.integration

CASES = int(os.environ.get("CKPT_DIFF_CASES", "150"))
SUBS = int(os.environ.get("CKPT_DIFF_SUBS", "25"))
SEED = int(os.environ.get("CKPT_DIFF_SEED", "13"))


def run_rounds(diff: cd.Differential, min_cases: int) -> dict:
    totals: dict = {"cases": 0, "divergences": [], "unnecessary": [], "ran": 0, "edits": {}}
    while totals["cases"] < min_cases or diff.round < 2:
        result = diff.run_round()
        totals["cases"] += result.cases
        totals["ran"] += result.ran if result.cases else 0
        totals["divergences"] += [f"round {diff.round - 1}: {d}" for d in result.divergences]
        totals["unnecessary"] += [f"round {diff.round - 1}: {u}" for u in result.unnecessary]
        for kind, n in result.edits.items():
            totals["edits"][kind] = totals["edits"].get(kind, 0) + n
    return totals


@pytest.mark.timeout(1800)  # about a minute on an idle 2-core machine; rounds are sequential
def test_generated_edits_with_the_store_equal_fresh_runs(tmp_path):
    assert not cd.PENDING  # every edit kind runs here
    # Global edits every third round, in turn: the templates file and its helper module.
    diff = cd.Differential(tmp_path, SEED, SUBS, cd.EDITS, cd.GLOBAL_EDITS, 3, twins=True)
    assert any(len(sub.outside) == 2 for sub in diff.spec.subs)  # two outside inputs, one name
    totals = run_rounds(diff, CASES)
    summary = (
        f"{totals['cases']} generated cases (seed {SEED}, {SUBS} sub-workflows x "
        f"{diff.round - 1} edited rounds), {len(totals['divergences'])} divergences, "
        f"{len(totals['unnecessary'])} unnecessary reruns, {totals['ran']} jobs ran after "
        f"edits; edits: {totals['edits']}"
    )
    print(summary)
    assert totals["cases"] >= CASES
    for kind in (*cd.GLOBAL_EDITS, "outside"):
        assert any(kind in k.split("+") for k in totals["edits"]), (kind, summary)
    assert totals["ran"] > 0  # the edits made jobs run: the comparison is not vacuous
    assert not totals["divergences"], (
        summary + "\n" + "\n".join(totals["divergences"]) + "\n" + cd.describe(diff.spec)
    )
    assert not totals["unnecessary"], summary + "\n" + "\n".join(totals["unnecessary"])
