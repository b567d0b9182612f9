"""Whether Snakemake runs ``--executor sticky`` as local or as cluster execution.

Snakemake reads a plugin's ``common_settings.non_local_exec`` to decide what ``--cores`` and
``--jobs`` mean, which jobs are local (``localrules``, run by its own local executor) and how
the others are scheduled. Under ``--sticky-backend slurm`` every job that does not opt in is a
Slurm job, so the run must be cluster execution exactly as under ``--executor slurm``; under
the local backend it stays local execution. The backend is only known once Snakemake builds
this plugin's settings (before it reads ``common_settings``), so the settings object applies
it here: this module owns the one mutable ``CommonSettings`` of the plugin.
"""

from snakemake_interface_executor_plugins.settings import CommonSettings

COMMON_SETTINGS = CommonSettings(
    # Local semantics by default: --cores/--jobs bound the run, every job comes to this
    # executor, and jobs that do not opt in run through Snakemake's own local executor.
    non_local_exec=False,
    implies_no_shared_fs=False,
    job_deploy_sources=False,
    pass_envvar_declarations_to_cmd=True,
    auto_deploy_default_storage_provider=False,
)


def apply_backend(backend: str) -> None:
    """Cluster execution for ``slurm`` (hybrid: pilots plus Slurm jobs), local otherwise."""
    COMMON_SETTINGS.non_local_exec = backend == "slurm"


def hybrid() -> bool:
    """Whether this run is cluster execution (``--sticky-backend slurm``)."""
    return COMMON_SETTINGS.non_local_exec
