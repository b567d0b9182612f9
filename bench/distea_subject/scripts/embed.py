import distea.autotrace  # noqa: F401  (traces this job when $DISTEA_TRACE is set)

# isort: split
import json

import stickyinvoc

model = stickyinvoc.state(snakemake)
with open(snakemake.input[0]) as f:
    tokens = json.load(f)["tokens"]
with open(snakemake.output[0], "w") as f:
    json.dump({"vector": model.embed(tokens)}, f)
