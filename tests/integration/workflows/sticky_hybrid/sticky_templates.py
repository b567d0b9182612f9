"""The template of the mixed workflow: its pilots run on the cpu partition."""

import os

from stickyinvoc import template


@template("counter", resources={"slurm_partition": "cpu", "cpus_per_task": 1, "runtime": 10})
def counter():
    return {"pid": os.getpid(), "factor": 10}
