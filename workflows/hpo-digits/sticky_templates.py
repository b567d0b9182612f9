"""Sticky template of the hpo-digits workflow: the digits data set, loaded once per worker, and
torch set up once (the CNN objective's: a forked trial would otherwise import and set it up
again; docs/sticky.md, "Warm up the template").

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

    try:  # the CNN trials' library, set up once per worker, not again in every forked trial
        import torch

        weight = torch.zeros(1, requires_grad=True)
        weight.sum().backward()
        torch.optim.Adam([weight]).step()  # Adam's first step imports what it needs
    except ImportError:  # an SVM-only search needs no torch
        pass
    return load_data()
