"""``import distea.autotrace`` at the top of a rule script: trace it when ``$DISTEA_TRACE`` is set.

Without the variable the import does nothing, so the line can stay in production scripts. A
hook imported by the script itself (rather than a ``sitecustomize.py`` on ``PYTHONPATH``)
keeps tracing out of every other Python process of the run (Snakemake itself, conda, tools)
and cannot be shadowed by a site's own ``sitecustomize``.

In a ``script:`` the job is read from the ``snakemake`` object Snakemake's preamble put in
``__main__``; Snakemake runs a temporary copy of the script, whose functions are reported
under the real script's name.
"""

import sys

from . import tracer as _tracer
from ._schema import job_key


def _start() -> None:
    main = sys.modules.get("__main__")
    smk = getattr(main, "snakemake", None)
    job = None
    if smk is not None:
        job = job_key(smk.rule, dict(smk.wildcards.items()), list(smk.output))
    real = getattr(main, "__real_file__", None)
    shown = getattr(main, "__file__", None)
    aliases = {real: shown} if real and shown and real != shown else None
    trace = _tracer.start("script", aliases=aliases, job=job)
    if trace is not None and smk is not None:
        _tracer.watch_job(trace, smk)


_start()
