import distea.autotrace  # noqa: F401  (traces this job when $DISTEA_TRACE is set)

# isort: split

import csv
import json

from qclib import features


def centred(xs):
    middle = sum(xs) / len(xs)
    return [x - middle for x in xs]


def spread(xs):
    return max(xs) - min(xs)


LOCAL = {"spread": spread}

with open(snakemake.input[0]) as f:
    xs = [float(row["value"]) for row in csv.DictReader(f)]
kind = snakemake.params.kind
xs = features.f_clip(xs, snakemake.params.get("clip", 100.0))
if kind == "direct":
    out = {"range": features.f_range(xs), "scaled": features.f_scaled(xs, 2.0)}
elif kind == "range":
    out = {"range": features.extract("range", xs), "half": features.half(xs)}
else:
    out = {"mean": features.extract("mean", xs), "summary": features.summarise(xs)}
    out["spread"] = LOCAL["spread"](centred(xs))
with open(snakemake.output[0], "w") as f:
    json.dump(out, f, sort_keys=True)
