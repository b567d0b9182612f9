"""The red team of ``execution: async`` on the sticky runtime (issue 30, part 4): 29 cases a
helper wrote from the user docs only (docs/shadho-execution.md, docs/shadho.md,
docs/sticky.md), never having seen the code or the tests. Each folder under redteam30d/ is a
search (``spec.yaml``, ``obj.py``, helpers) and ``expect.json``, what the docs promise: the
exit status, the history's length, whether every trial is ok, values every ok trial must
report in its ``extra`` (what it observed of its process before changing it: a trial must
see the process as a fresh one would), text the output must hold.

CI runs the cases in ``CI``; ``SHADHO_REDTEAM_ALL=1`` runs them all. On the first pass 26 of
29 passed: ``joblib_loky_parallel`` hung (a fork child's exit never told loky's executor the
interpreter exits: fixed in the sticky runtime, now ``_exit._shutdown_threads``),
``unseeded_generators_dup`` replayed one ``PCG64`` stream and one ``torch.Generator`` in
every trial (numpy's fixed in ``_seeds``; torch's amended), ``direct_inplace_state`` carried
in-place changes from trial to trial in direct mode (a documented gap; amended). Cases whose
expectation was changed after the red team, and why, are in ``AMENDED``."""

import json
import os
import shutil
from pathlib import Path

import pytest

import snakemake_shadho as shadho
from tests.integration.shadho.test_async_sticky import run_search

pytestmark = pytest.mark.integration

CASES = Path(__file__).with_name("redteam30d")
NAMES = sorted(p.name for p in CASES.iterdir() if (p / "expect.json").exists())

CI = {
    # failed on the first pass (fixed, or amended below)
    "joblib_loky_parallel",
    "unseeded_generators_dup",
    "direct_inplace_state",
    # one of each kind
    "fork_module_state",
    "fork_process_settings",
    "template_state_and_file",
    "direct_canary",
}
"""The cases CI runs; the others (passing from the first run, or covered by a faster case:
an objective's ``os._exit`` by test_async_sticky.py) run with SHADHO_REDTEAM_ALL=1."""

AMENDED = {
    "unseeded_generators_dup": "a torch.Generator the objective's import seeds from the OS "
    "(g.seed()) repeats in every forked trial: torch's C type cannot be watched while the "
    "template builds, so its seed cannot be told fixed or from the OS (docs/sticky.md); the "
    "numpy generators of the case, however made, are reseeded since the red team",
    "direct_inplace_state": "direct mode (a thread started at import) does not see changes made "
    "in place to a module's containers, class attributes or lru caches, as docs/sticky.md and "
    "now docs/shadho-execution.md say; the case checks that such a search still runs to the "
    "end (fork mode, the default, has no such gap: fork_module_state)",
}
"""Case -> why its expect.json differs from the red team's (the red team's is kept beside it
as expect.redteam.json)."""


def run_case(name: str, tmp_path: Path) -> tuple[int, str, list[dict]]:
    folder = tmp_path / name
    shutil.copytree(CASES / name, folder)
    code, out = run_search(folder, timeout=300)
    history = shadho.read_jsonl(folder / "out/history.jsonl")
    return code, out, history


@pytest.mark.parametrize("name", NAMES)
def test_red_team_case(name, tmp_path):
    if name not in CI and os.environ.get("SHADHO_REDTEAM_ALL") != "1":
        pytest.skip("SHADHO_REDTEAM_ALL=1")
    expect = json.loads((CASES / name / "expect.json").read_text())
    code, out, history = run_case(name, tmp_path)
    why = f"{name}: {expect.get('why')}\n{out[-4000:]}"
    if expect["returncode"] == "nonzero":
        assert code != 0, why
    else:
        assert code == expect["returncode"], why
    if expect.get("history_len") is not None:
        assert len(history) == expect["history_len"], why
    if expect.get("all_ok") is not None:
        assert all(r["status"] == "ok" for r in history) == expect["all_ok"], why
    for r in history:
        if r["status"] != "ok":
            continue
        for key, value in expect.get("extra_equals", {}).items():
            assert r["extra"].get(key) == value, (key, r["trial"], r["extra"].get(key), why)
        for key, allowed in expect.get("extra_subset", {}).items():  # an amended case's gap
            assert set(r["extra"].get(key)) <= set(allowed), (key, r["trial"], why)
    for text in expect.get("output_contains", []):
        assert text in out, (text, why)
