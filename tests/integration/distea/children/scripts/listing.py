import distea.autotrace  # noqa: F401

# isort: split
import os

folder = snakemake.input[0]
total = sum(
    int(open(os.path.join(folder, f)).read())
    for f in sorted(os.listdir(folder))
    if f.endswith(".txt")
)
open(snakemake.output[0], "w").write(f"{total}\n")
