import distea.autotrace  # noqa: F401

# isort: split
from calc import numbers

with open(snakemake.input[0]) as f:
    values = numbers.parse(f.read())
values = numbers.normalise(values, snakemake.params.clip, snakemake.params.scale)
with open(snakemake.output[0], "w") as f:
    f.write(" ".join(f"{v:.4f}" for v in values) + "\n")
