"""The template Snakemake's own script tests are opted in to (they never call state())."""

from stickyinvoc import template


@template("upstream")
def upstream():
    return {"warm": True}


@template("upstream_fork", isolation="fork")
def upstream_fork():
    return {"warm": True}
