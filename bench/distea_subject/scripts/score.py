import distea.autotrace  # noqa: F401  (traces this job when $DISTEA_TRACE is set)

# isort: split
import json

from wflib import scoring

with open(snakemake.input[0]) as f:
    vector = json.load(f)["vector"]
value = scoring.score(vector, snakemake.params.threshold, snakemake.params.boost)
grade = scoring.label(value, snakemake.params.threshold)
with open(snakemake.output[0], "w") as f:
    f.write(f"{snakemake.wildcards.s}\t{value}\t{grade}\n")
