import distea.autotrace  # noqa: F401

# isort: split
import os

lines = open(snakemake.input[0]).read().split()
extra = os.path.join("data", "extra.txt")
if os.path.exists(extra):
    lines.append("EXTRA")
open(snakemake.output[0], "w").write(",".join(lines) + "\n")
