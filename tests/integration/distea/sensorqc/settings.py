"""Snakefile-level helpers: they run in Snakemake's own process, while it builds the DAG."""

import functools

KINDS = {"S1": "range", "S2": "mean", "S3": "direct"}


def samples():
    return sorted(KINDS)


def raw_path(sample):
    return f"data/{sample}.csv"


@functools.cache
def _limits():
    return {"S1": 5.0, "S2": 7.5}


def clip_for(sample):
    return _limits().get(sample, 10.0)


def kind_of(sample):
    return KINDS[sample]
