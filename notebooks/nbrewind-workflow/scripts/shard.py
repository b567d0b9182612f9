"""One shard of a Monte Carlo estimate of pi (a stand-in for a job on a cluster node)."""

import json

import numpy as np

rng = np.random.default_rng(int(snakemake.wildcards.i))
draws = snakemake.params.draws
inside = 0
for _ in range(10):
    xy = rng.random((draws // 10, 2))
    inside += int(((xy**2).sum(axis=1) <= 1.0).sum())
with open(snakemake.output[0], "w") as f:
    json.dump({"shard": int(snakemake.wildcards.i), "inside": inside, "draws": draws}, f)
