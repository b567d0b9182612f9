import distea.autotrace  # noqa: F401

# isort: split
import json

from qclib import features

with open(snakemake.input[0]) as f:
    values = json.load(f)["values"]
feats = features.extract(values, snakemake.params.names)
feats["span"] = round(features.f_range(values), 4)
with open(snakemake.output[0], "w") as f:
    json.dump(feats, f, sort_keys=True)
