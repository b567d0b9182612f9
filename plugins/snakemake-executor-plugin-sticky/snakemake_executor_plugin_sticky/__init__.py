"""``snakemake --executor sticky``: warm sticky workers for Snakemake jobs.

Rules that name a sticky template (``resources: sticky="NAME"``) run as *invocations* inside
long-lived worker processes that build the template's state once; every other job runs exactly
as under ``--executor local``. See the project README for the whole story.
"""

from snakemake_interface_executor_plugins.settings import CommonSettings

from .executor import Executor
from .settings import ExecutorSettings

common_settings = CommonSettings(
    # Local semantics: --cores/--jobs bound the run, every job comes to this executor, and
    # jobs that do not opt in run through Snakemake's own local executor, unchanged.
    non_local_exec=False,
    implies_no_shared_fs=False,
    job_deploy_sources=False,
    pass_envvar_declarations_to_cmd=True,
    auto_deploy_default_storage_provider=False,
)

__all__ = ["Executor", "ExecutorSettings", "common_settings"]
