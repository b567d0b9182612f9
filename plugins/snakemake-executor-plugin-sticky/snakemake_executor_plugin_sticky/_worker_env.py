"""The environment a worker process starts with (local or in a Slurm pilot).

A worker builds its templates once, single-threaded: every thread-pool size Snakemake sets
for a job from its ``threads`` is 1 while the template builds, whatever the shell running
Snakemake exports. A shell's ``OPENBLAS_NUM_THREADS=2`` or ``OMP_NUM_THREADS=8`` (common where
an HPC module sets it) would otherwise start a BLAS thread pool at the template's
``import numpy``, which makes forking unsafe: every job of that template then ran in direct
mode. Each job still gets its own ``threads`` (its environment, and the BLAS pools sized to
them, as a fresh job's are); under ``--executor local`` a job never sees the shell's values
either, since Snakemake sets these variables for every ``script:`` job.

Some libraries start a native thread pool on first use that no thread variable sizes to
zero: :data:`BUILD_ONLY` switches those off while a template builds (:func:`building`), and
only then, so that the template process stays safe to fork and each job starts its own pool,
as a fresh process does.
"""

import contextlib
import os
from collections.abc import Iterator, Mapping, MutableMapping
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


BUILD_ONLY = {"TOKENIZERS_PARALLELISM": "false"}
"""Set while a template builds, unless the environment sets them already; unset after it.

Hugging Face ``tokenizers`` starts a Rust (rayon) thread pool, one thread per core, on its
first batch encode: a template that loads a tokenizer and warms the model up with one input
(as the docs advise) left two native threads running, so every job of it ran in direct mode,
not forked (:mod:`._hazards`). ``tokenizers`` reads the variable at every call, so a job
forked after the build finds it unset and starts its own pool on first use, as a fresh
process does; had the pool been started, ``tokenizers`` would switch parallelism off in
every forked child (where a fresh job's own build would have started it)."""


@contextlib.contextmanager
def building(environ: Optional[MutableMapping[str, str]] = None) -> Iterator[None]:
    """While a template builds: :data:`BUILD_ONLY`'s variables that ``environ`` (default
    ``os.environ``) does not set are set, and removed afterwards unless the build changed them.

    >>> env = {"TOKENIZERS_PARALLELISM": "true"}
    >>> with building(env):
    ...     env["TOKENIZERS_PARALLELISM"]
    'true'
    >>> env = {}
    >>> with building(env):
    ...     env["TOKENIZERS_PARALLELISM"]
    'false'
    >>> env
    {}
    """
    env = os.environ if environ is None else environ
    added = {name: value for name, value in BUILD_ONLY.items() if name not in env}
    env.update(added)
    try:
        yield
    finally:
        for name, value in added.items():
            if env.get(name) == value:
                del env[name]
