"""nbrewind: audit and repeat kernels for papermill runs, with cell checkpoints in the .ipynb.

``nbrewind-audit`` records, for every cell, what it read and wrote (AST plus a run-time check
for in-place mutation), a hash of its source, the hashes of its inputs and a signed checkpoint
of its outputs' values, in the cell's ``metadata.nbrewind``. ``nbrewind-repeat`` re-executes
the minimal set of cells (changed source, changed inputs, no valid checkpoint) and restores the
rest. Both run under papermill with the ``nbrewind`` engine::

    papermill in.ipynb out.ipynb -k nbrewind-audit --engine nbrewind -p alpha 0.5
    papermill out.ipynb again.ipynb -k nbrewind-repeat --engine nbrewind -p alpha 0.7

Public API: the data-flow analysis, the repeat policy, the engine, and the notebook tools.
"""

from ._dataflow import CellAnalysis, analyse_cell, reads_closure, source_hash
from ._engine import NBRewindError, kernel_mode
from ._install import KERNEL_NAMES, install_kernels
from ._notebook import NotebookError, format_table, import_lab, inspect, pack, review, trust
from ._plan import CellFacts, Decision, decide
from ._review import CheckpointReview, pickle_globals
from ._signing import Trust

__all__ = [
    "KERNEL_NAMES",
    "CellAnalysis",
    "CellFacts",
    "CheckpointReview",
    "Decision",
    "NBRewindEngine",
    "NBRewindError",
    "NotebookError",
    "Trust",
    "analyse_cell",
    "decide",
    "format_table",
    "import_lab",
    "inspect",
    "install_kernels",
    "kernel_mode",
    "pack",
    "pickle_globals",
    "reads_closure",
    "review",
    "source_hash",
    "trust",
]


def __getattr__(name: str) -> object:
    # The engine imports papermill, which imports this package back through its entry point:
    # resolve it lazily (see nbrewind._engine).
    if name == "NBRewindEngine":
        from . import _engine

        return _engine.NBRewindEngine
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
