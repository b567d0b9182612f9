"""The eighth red team (issue 25, 2026-12-06, third session): what depends on the garbage
collector (its counters, frozen objects, callbacks, ``gc.get_objects``), and the exit.

A helper that saw only docs/sticky.md and README.md wrote 29 cases (``redteam25h_cases.py``);
each runs under ``--executor local``, sticky fork mode and sticky direct mode, and every file
under ``out/``, ``logs/`` and which jobs failed must match local's, but the known limits
below (documented in docs/sticky.md)."""

import sys
from pathlib import Path

import pytest

from tests.integration.snakemake_executor_plugin_sticky import test_redteam as base

sys.path.insert(0, str(Path(__file__).parent))
import redteam25h_cases as cases  # noqa: E402

sys.path.pop(0)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1800)]

_FROZEN_WALK = (
    "the template's objects are frozen (gc.freeze): gc.get_objects() and gc.get_referrers() "
    "do not list them (the job says so, one warning)"
)
_FROZEN = "the template's objects are frozen (gc.freeze)"
BOTH_LIMITS: dict[str, str] = {
    "leak_check_live_dataframes": _FROZEN_WALK,
    "torch_tensor_census": _FROZEN_WALK,
    "referrers_before_release": _FROZEN_WALK,
    "open_file_leak_audit": _FROZEN_WALK,
    "freeze_before_fork_pool_logged": _FROZEN + ": gc.freeze() in a job freezes only its own",
    "drop_template_taxonomy_verify_freed": _FROZEN + ": a cycle of them a job drops is not "
    "collected",
    "build_minidom_garbage_gc_collect_logged": "the build's garbage is collected before the "
    "first job (a fresh job's first collection finds it)",
    "build_weak_registry_garbage": "the build's garbage is collected before the first job",
    "gen2_heuristic_chunk_profiler": _FROZEN + ": not counted as long-lived, so automatic "
    "full collections come sooner than in a fresh process",
    "gen2_heuristic_buffer_pool": _FROZEN + ": not counted as long-lived",
    "weak_peak_index_without_collect": "a job starts with the collector's counters at zero, "
    "a fresh one where Snakemake's preamble left them",
    "gc_stats_run_manifest": "gc.get_stats() counts the worker's collections too",
    "template_teardown_logs_to_job_log": "a template's teardown runs when the worker stops, once",
    "tracemalloc_traceback_depth": "the worker's frames are above the script's (its "
    "tracebacks are longer)",
}
FORK_LIMITS: dict[str, str] = {
    **BOTH_LIMITS,
    "tracemalloc_step_profile": "allocator state (free lists, pools) is the template's",
}
_DIRECT_TEARDOWN = (
    "direct mode: the script's globals are cleared at once, the worker's modules, builtins, "
    "sys and threading stay (no interpreter teardown)"
)
DIRECT_LIMITS: dict[str, str] = {
    **BOTH_LIMITS,
    **{
        name: _DIRECT_TEARDOWN
        for name in (
            "atexit_thread_pool_after_shutdown",
            "direct_gc_callback_left_registered",
            "gc_callbacks_exit_collection_log",
            "helper_module_cache_del_flush",
            "lazy_import_in_del_at_exit",
            "pool_del_logs_after_logging_shutdown",
            "snakemake_object_reporter_cycle",
            "unclosed_handles_atexit_then_del",
        )
    },
}
"""Known differences (documented in docs/sticky.md, "Known differences"): not asserted.
First pass: 16 of 29 cases differed in fork mode, 22 in direct mode. Fixed in fork mode: the
collection before the teardown runs with the script's standard streams in place (a
``__del__`` it runs writes to the log the script put on ``sys.stderr``;
``unclosed_handles_atexit_then_del``); a job that walks the collector's objects gets one
warning saying what it does not see."""


runs, test_every_case_matches_local, test_the_known_limits_name_real_cases = base.suite_tests(
    "redteam25h", cases, FORK_LIMITS, DIRECT_LIMITS
)
