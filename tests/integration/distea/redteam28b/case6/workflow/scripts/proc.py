import distea.autotrace  # noqa: F401

# isort: split
from utils import fmt

lines = open(snakemake.input[0]).read().split()
open(snakemake.output[0], "w").write(fmt(lines, snakemake.params.scale) + "\n")
