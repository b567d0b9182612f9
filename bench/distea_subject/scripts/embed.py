import json

import distea.autotrace  # noqa: F401
import stickyinvoc

model = stickyinvoc.state(snakemake)
with open(snakemake.input[0]) as f:
    tokens = json.load(f)["tokens"]
with open(snakemake.output[0], "w") as f:
    json.dump({"vector": model.embed(tokens)}, f)
