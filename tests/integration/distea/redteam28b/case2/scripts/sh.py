import distea.autotrace  # noqa: F401

# isort: split
from wfh import util

lines = open(snakemake.input[0]).read().split()
open(snakemake.output[0], "w").write(util.h(lines) + "\n")
