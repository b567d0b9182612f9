import distea.autotrace  # noqa: F401

# isort: split
with open(snakemake.output[0], "w") as out:
    for p in sorted(snakemake.input):
        out.write(open(p).read())
