import distea.autotrace  # noqa: F401

# isort: split
import json

rows = []
for path in snakemake.input:
    with open(path) as f:
        rows.append(f"{path}\t{json.load(f)}\n")
with open(snakemake.output[0], "w") as f:
    f.writelines(sorted(rows))
