"""ckptstore: the content-addressed checkpoint store behind checkpoint-aware rule skipping.

Job outputs are stored by content (sha256), and each job's outputs are recorded under its
provenance key, so an unchanged job can be restored instead of rerun, here or at another site
that sees the same store. Writes are atomic, reads are verified, concurrent runs are safe, and
garbage collection keeps what recent and running workflows need.

The provenance keys live in the sticky executor (``--sticky-checkpoints``), which restores and
stores jobs through this package.
"""

from ._materialise import kept_mode
from .explain import Explanation, explain_change, explain_outputs
from .store import (
    CheckpointStore,
    CorruptObjectError,
    GcReport,
    Manifest,
    NameRecord,
    RunRecord,
    StoreError,
    file_digest,
)

__all__ = [
    "CheckpointStore",
    "CorruptObjectError",
    "Explanation",
    "GcReport",
    "Manifest",
    "NameRecord",
    "RunRecord",
    "StoreError",
    "explain_change",
    "explain_outputs",
    "file_digest",
    "kept_mode",
]
