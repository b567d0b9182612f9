"""The second checkpoint red team (issue 26, 2026-12-06): how code and modules are found and
keyed (``include:`` and ``module`` files in other folders, helpers in ``rules/``, ``lib/``,
``scripts/``, ``sys.path`` changes, packages, shadowing, code moved between files).

A helper that saw only docs/checkpoints.md and README.md wrote the workflows and edits
(``redteam26b_cases.py``), after the key found a ``run:`` block's imports on ``sys.path``;
each runs through the first checkpoint red team's harness
(:func:`test_checkpoint_redteam.assert_ends_like_a_fresh_run`): site B, the edit with the
store, ends like site C, the edit without it, and an edit that changes no output reruns
nothing, but the known unnecessary reruns below (never stale, documented in
docs/checkpoints.md).

First pass (after 2b5295f, which found a ``run:`` block's imports on ``sys.path``): 9 of 25
cases failed, 6 stale restores (a module loaded by ``importlib.import_module`` with a
computed name or from a file path, one a block imports after putting ``lib/`` on
``sys.path`` itself, a script's helper shadowed by the Snakefile folder's or found on a
folder the Snakefile put on ``sys.path``, a module's own import of a sibling) and 3
unnecessary reruns (the unloaded copy of a shadowed helper; Snakemake's own ``SIGTERM``
handler as process state, set once jobs run; a comment in a local module, kept below). Fixed
by construction: scripts' imports looked for in Python's order, a module found nowhere or
loaded by a computed name counts every workflow Python file, a module not imported yet
counts what it imports in turn, Snakemake's own signal handlers are the launch's."""

import sys
from pathlib import Path

import pytest

from tests.integration.snakemake_executor_plugin_sticky.test_checkpoint_redteam import (
    assert_ends_like_a_fresh_run,
)

sys.path.insert(0, str(Path(__file__).parent))
import redteam26b_cases as rt  # noqa: E402

sys.path.pop(0)

pytestmark = pytest.mark.integration

KNOWN_UNNEEDED: dict[str, str] = {
    "comment_only_edit_in_runtime_imported_module": "a workflow-local module counts by its "
    "files' content: a comment in it reruns the jobs that import it (never stale)",
}
"""Edits that change nothing a job does but still rerun it: not asserted for "rerun
nothing"."""


def test_the_known_lists_name_real_cases():
    assert set(KNOWN_UNNEEDED) <= set(rt.CASES)


@pytest.mark.parametrize("name", sorted(rt.CASES))
def test_red_team_edit_through_the_store_ends_like_a_fresh_run(tmp_path, name):
    assert_ends_like_a_fresh_run(
        tmp_path, name, rt.CASES[name], unneeded_known=name in KNOWN_UNNEEDED
    )
