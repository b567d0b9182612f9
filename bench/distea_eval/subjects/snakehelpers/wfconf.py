"""Workflow configuration helpers, called by the Snakefile while Snakemake builds the DAG."""


def samples():
    return ["x1", "x2", "x3"]


def raw_input(wildcards):
    return f"data/{wildcards.s}.txt"


def clip_for(sample):
    if sample.endswith("1"):
        return 5.0
    return 8.0
