import distea.autotrace  # noqa: F401

# isort: split
import os

names = sorted(os.listdir("data/samples"))
open(snakemake.output[0], "w").write(",".join(names) + "\n")
