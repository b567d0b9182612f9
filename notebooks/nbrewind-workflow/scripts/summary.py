"""Combine the shards into one estimate."""

import json

shards = [json.load(open(path)) for path in snakemake.input]
inside = sum(s["inside"] for s in shards)
draws = sum(s["draws"] for s in shards)
with open(snakemake.output[0], "w") as f:
    json.dump({"pi": 4 * inside / draws, "draws": draws, "shards": len(shards)}, f, indent=1)
