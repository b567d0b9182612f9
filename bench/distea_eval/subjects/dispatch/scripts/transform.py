import distea.autotrace  # noqa: F401

# isort: split
from ops import registry

with open(snakemake.input[0]) as f:
    values = [float(x) for x in f.read().split()]
values = registry.apply(snakemake.params.ops, values)
with open(snakemake.output[0], "w") as f:
    f.write(" ".join(f"{v:.4f}" for v in values) + "\n")
