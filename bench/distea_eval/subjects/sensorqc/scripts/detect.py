import distea.autotrace  # noqa: F401

# isort: split
import json

import stickyinvoc

detector = stickyinvoc.state(snakemake)
with open(snakemake.input[0]) as f:
    feats = json.load(f)
with open(snakemake.output[0], "w") as f:
    json.dump({"score": round(detector.score(feats), 6), "flag": detector.flag(feats, 2.5)}, f)
