import distea.autotrace  # noqa: F401

# isort: split
from calc import numbers

with open(snakemake.input[0]) as f:
    values = numbers.parse(f.read())
summary = numbers.describe(values)
with open(snakemake.output[0], "w") as f:
    f.write(
        f"{snakemake.wildcards.s}\t{summary['mean']}\t{summary['var']}\t{summary['outliers']}\n"
    )
