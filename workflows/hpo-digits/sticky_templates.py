"""Sticky template of the hpo-digits workflow: the digits data set, loaded once per worker.

Each trial is an invocation on a worker that already holds the data. On Slurm pilots
(profiles/slurm-sticky) a trial's own resources (its hardware class's partition, cpus and
memory) override the ones below.
"""

from stickyinvoc import template


@template(
    "digits",
    resources={"slurm_partition": "cpu", "cpus_per_task": 1, "mem_mb": 2000, "runtime": 60},
)
def digits():
    from snakemake_shadho.digits import load_data

    return load_data()
