"""One trial of an asynchronous search, run as a sticky invocation (see _trial_worker)."""

from snakemake_shadho._trial_worker import run_invocation

run_invocation(snakemake)  # type: ignore[name-defined]  # noqa: F821 - the script's global
