import distea.autotrace  # noqa: F401  (traces this job when $DISTEA_TRACE is set)

# isort: split

import json

decimals = snakemake.params.get("decimals", 3)
lines = []
for path in snakemake.input:
    values = json.load(open(path))
    lines.append(path + " " + " ".join(f"{k}={values[k]}" for k in sorted(values)))
with open(snakemake.output[0], "w") as f:
    f.write(f"{round(1 / 3, decimals)}\n" + "\n".join(lines) + "\n")
