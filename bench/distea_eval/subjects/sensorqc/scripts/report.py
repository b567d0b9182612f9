import distea.autotrace  # noqa: F401

# isort: split
import json

decimals = snakemake.params.get("decimals", 3)
lines = []
for path in snakemake.input:
    with open(path) as f:
        result = json.load(f)
    lines.append(f"{path}\t{round(result['score'], decimals)}\t{result['flag']}\n")
with open(snakemake.output[0], "w") as f:
    f.writelines(lines)
