import distea.autotrace  # noqa: F401  (traces this job when $DISTEA_TRACE is set)

# isort: split
import json

from wflib import text

with open(snakemake.input[0]) as f:
    raw = f.read()
tokens = text.normalize(raw, snakemake.params.min_len)
with open(snakemake.output[0], "w") as f:
    json.dump({"tokens": tokens}, f)
