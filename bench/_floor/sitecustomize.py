"""Measurement only (``bench/peers.py --floor``): a sticky worker that skips its isolation.

On ``PYTHONPATH`` for the floor runs alone. Once a worker's direct mode has its baseline (its
first job), every later job's script is exec'd bare in the worker: no snapshot, no fresh exit,
no restore, no check. That breaks the sticky contract (a job's changes reach the next job), so
it is never shipped: it measures what the executor and Snakemake cost per job when the
worker's own isolation costs nothing, the floor that no cut of the worker's work can go below.
"""

import importlib.abc
import importlib.util
import sys
import time

TARGET = "snakemake_executor_plugin_sticky._isolation"


def _patch(module):  # type: ignore[no-untyped-def]
    isolation, outcome = module.Isolation, module.Outcome
    run_direct = isolation.run_direct

    def bare(self, script):  # type: ignore[no-untyped-def]
        if self.pristine is None:  # the first job: the baseline, as shipped
            return run_direct(self, script)
        start = time.perf_counter()
        exec(script.code, {"__name__": "__main__", "snakemake": script.snakemake})
        return outcome(True, None, [time.perf_counter() - start], [0.0], 0.0, {})

    isolation.run_direct = bare


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):  # type: ignore[no-untyped-def]
        if name != TARGET:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module

        def patched(module):  # type: ignore[no-untyped-def]
            exec_module(module)
            _patch(module)

        spec.loader.exec_module = patched  # type: ignore[method-assign]
        return spec


sys.meta_path.insert(0, _Finder())
