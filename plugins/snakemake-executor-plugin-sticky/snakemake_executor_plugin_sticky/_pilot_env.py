"""The environment a Slurm pilot receives: documented, not the submit host's whole one.

A pilot gets (from the environment of the Snakemake process, where set):

- ``PATH`` and the Python environment: ``VIRTUAL_ENV``, ``CONDA_*``, ``PYTHON*``,
  ``LD_LIBRARY_PATH``, ``JUPYTER_PATH``;
- who and where: ``HOME``, ``USER``, ``LOGNAME``, ``SHELL``, ``LANG``, ``LANGUAGE``, ``LC_*``,
  ``TZ``;
- what its jobs need: the thread limits the manager sets (``OMP_NUM_THREADS``,
  ``OPENBLAS_NUM_THREADS`` and the others of :data:`._worker_env.THREAD_VARIABLES`), the
  plugins' own variables (``STICKY_*``, ``DISTEA_*``,
  ``SNAKEMAKE_*``), and every variable the workflow declares with ``envvars:`` (Snakemake's
  way of naming what remote jobs need);

and never the submit host's ``SLURM_*`` variables (those of a Slurm job Snakemake may run in):
Slurm sets the pilot's own. ``SLURM_CONF`` alone is kept, for the ``sbatch`` client to find
its cluster; it names the same cluster inside the pilot. ``SBATCH_*`` input variables reach
``sbatch`` (a site's defaults) but not the pilot.

``sbatch`` runs with exactly this environment and ``--export=NAME,...`` listing its names
(values never appear on a command line), so nothing else of the submit host reaches the job.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ._worker_env import THREAD_VARIABLES

PILOT_NAMES = (
    "PATH",
    "LD_LIBRARY_PATH",
    "VIRTUAL_ENV",
    "JUPYTER_PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TZ",
    *THREAD_VARIABLES,
)
"""Variables a pilot receives by name."""

PILOT_PREFIXES = ("PYTHON", "CONDA_", "LC_", "STICKY_", "DISTEA_", "SNAKEMAKE_")
"""Variables a pilot receives by prefix."""

SUBMIT_ONLY_PREFIXES = ("SBATCH_",)
"""Seen by ``sbatch`` (site defaults), not exported to the pilot."""

KEPT_SLURM = ("SLURM_CONF",)
"""The only ``SLURM_*`` variables of the submit host that ``sbatch`` sees."""


@dataclass(frozen=True)
class PilotEnvironment:
    """``submit_env``: the environment ``sbatch`` runs with; ``export``: the names it passes
    on to the pilot (``--export=...``); ``dropped_slurm``: the submit host's ``SLURM_*``
    variables left out."""

    submit_env: dict[str, str]
    export: tuple[str, ...]
    dropped_slurm: tuple[str, ...]

    def export_option(self) -> str:
        return "--export=" + (",".join(self.export) if self.export else "NONE")


def pilot_environment(environ: Mapping[str, str], needed: Iterable[str] = ()) -> PilotEnvironment:
    """The documented pilot environment out of ``environ``; ``needed`` names further
    variables the jobs need (the workflow's ``envvars:``, the manager's own)."""
    needed = set(needed)
    export = []
    submit: dict[str, str] = {}
    dropped = []
    for name, value in environ.items():
        if name.startswith("SLURM_"):
            if name in KEPT_SLURM:
                submit[name] = value
            else:
                dropped.append(name)
            continue
        if name.startswith(SUBMIT_ONLY_PREFIXES):
            submit[name] = value
            continue
        if name in PILOT_NAMES or name.startswith(PILOT_PREFIXES) or name in needed:
            if "," in name or "=" in name:
                continue  # not a name --export can carry
            submit[name] = value
            export.append(name)
    return PilotEnvironment(submit, tuple(sorted(export)), tuple(sorted(dropped)))
