"""The fourth sticky red team (issue 25, fork mode's pages populated ahead and its other changes
of 2026-12-04): cases a helper wrote from docs/sticky.md and the README only
(``redteam25d_cases.py``, kept as written), run through the first red team's machinery
(``test_redteam.py``: one Snakemake run per mode, each case a rule of chained jobs on one
worker), outputs and logs identical to ``--executor local`` in fork mode (the default) and in
direct mode."""

import sys
from pathlib import Path

import pytest

from tests.integration.snakemake_executor_plugin_sticky import test_redteam as base

sys.path.insert(0, str(Path(__file__).parent))
import redteam25d_cases as cases  # noqa: E402

sys.path.pop(0)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1800)]

BOTH_LIMITS = {
    "modules_present_at_script_start": "the worker's own modules are loaded when a job starts",
    "process_status_signals_threads_limits": "the worker's status fields (threads, signals)",
    "import_naming_touches_odd_sys_modules_entries": "a lazy module the job registers is "
    "loaded by the worker's end-of-job steps",
    "generator_objects_fixed_after_creation": "a generator object made from the OS and then "
    "seeded with a fixed seed in the template is reseeded per job",
    "shared_memory_in_template_state": "memory the template shares (a shared mmap, "
    "multiprocessing.Value, share_memory_()) is shared with every job",
}
FORK_LIMITS: dict[str, str] = {
    **BOTH_LIMITS,
    "getrusage_minor_faults_of_template_update": "a forked job copies the template pages it "
    "writes: its page-fault counts",
    "template_fork_hooks_and_wipeonfork": "the template's at-fork hooks run in every job, and "
    "its MADV_WIPEONFORK memory reads as zeros",
}
DIRECT_LIMITS: dict[str, str] = {
    **BOTH_LIMITS,
    "pretouch_private_file_mapping_goes_stale": "direct mode shares the template's state",
    "pretouch_numpy_memmap_copy_on_write_goes_stale": "direct mode shares the template's state",
    "pretouch_pagemap_present_pages_of_template_mapping": "direct mode shares the template's state",
    "pretouch_races_with_script_writes": "direct mode shares the template's state",
    "atexit_sees_imports_made_after_the_script": "direct mode's import watch is in place "
    "while the job's exit handlers run",
    "rlimit_nofile_zero_after_outputs": "a job that lowers RLIMIT_NOFILE to 0 fails in direct "
    "mode: the check after it cannot read the process",
}
"""Known differences (documented in docs/sticky.md, "Known differences"): not asserted.
Fixed from this red team: a template's open file rewound for every forked job, file mappings
never copied ahead, a process a job forks exits with its own sys.exit status."""


runs, test_every_case_matches_local, test_the_known_limits_name_real_cases = base.suite_tests(
    "redteam25d", cases, FORK_LIMITS, DIRECT_LIMITS
)
