import distea.autotrace  # noqa: F401

# isort: split
import numpy as np

m = np.loadtxt("data/mat.txt")
open(snakemake.output[0], "w").write(f"{m.sum()}\n")
