"""The job of rules/notebook.smk: one notebook stage (see nbrewind._stage)."""

from nbrewind._stage import main_from_snakemake

main_from_snakemake(snakemake)  # noqa: F821 - Snakemake defines it for scripts
