"""The environment a worker process starts with (local or in a Slurm pilot).

A worker builds its templates once, single-threaded: every thread-pool size Snakemake sets
for a job from its ``threads`` is 1 while the template builds, whatever the shell running
Snakemake exports. A shell's ``OPENBLAS_NUM_THREADS=2`` or ``OMP_NUM_THREADS=8`` (common where
an HPC module sets it) would otherwise start a BLAS thread pool at the template's
``import numpy``, which makes forking unsafe: every job of that template then ran in direct
mode. Each job still gets its own ``threads`` (its environment, and the BLAS pools sized to
them, as a fresh job's are); under ``--executor local`` a job never sees the shell's values
either, since Snakemake sets these variables for every ``script:`` job.
"""

from collections.abc import Mapping
from typing import Optional

THREAD_VARIABLES = (
    "OMP_NUM_THREADS", "GOTO_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS",
)  # fmt: skip
"""The thread-pool sizes Snakemake sets for a job from its ``threads``."""


def worker_environment(
    environ: Mapping[str, str], overrides: Optional[Mapping[str, str]] = None
) -> dict[str, str]:
    """``environ`` with ``overrides`` (what the caller sets for its workers, kept as given)
    and every other thread variable set to 1.

    >>> shell = {"OPENBLAS_NUM_THREADS": "4", "HOME": "/h"}
    >>> env = worker_environment(shell, {"MKL_NUM_THREADS": "2"})
    >>> env["OPENBLAS_NUM_THREADS"], env["MKL_NUM_THREADS"], env["OMP_NUM_THREADS"], env["HOME"]
    ('1', '2', '1', '/h')
    """
    overrides = dict(overrides or {})
    env = {**environ, **overrides}
    for name in THREAD_VARIABLES:
        if name not in overrides:
            env[name] = "1"
    return env
