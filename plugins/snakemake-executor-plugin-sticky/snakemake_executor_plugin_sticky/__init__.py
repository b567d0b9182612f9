"""``snakemake --executor sticky``: warm sticky workers for Snakemake jobs.

Rules that name a sticky template (``resources: sticky="NAME"``) run as *invocations* inside
long-lived worker processes that build the template's state once; every other job runs exactly
as under ``--executor local`` (with ``--sticky-backend slurm``: as under ``--executor slurm``).
See the project README for the whole story.
"""

from ._mode import COMMON_SETTINGS
from .executor import Executor
from .settings import ExecutorSettings

# Local execution under the local backend; cluster execution (as --executor slurm) under
# --sticky-backend slurm, applied when Snakemake builds the settings (see _mode).
common_settings = COMMON_SETTINGS

__all__ = ["Executor", "ExecutorSettings", "common_settings"]
