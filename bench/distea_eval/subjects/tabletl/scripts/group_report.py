import distea.autotrace  # noqa: F401

# isort: split
import json

from etl import stats

digits = snakemake.params.digits
weights = snakemake.params.weights
samples = {}
for feat_path, fold_path in zip(snakemake.input.feat, snakemake.input.fold, strict=True):
    name = feat_path.split("/")[-1].removesuffix(".json")
    with open(feat_path) as f:
        feat = json.load(f)
    with open(fold_path) as f:
        folded = sum(float(line.split("\t")[1]) for line in f if line.strip())
    load = feat["columns"]["load"]
    samples[name] = {
        "rows": feat["rows"],
        "spikes": sum(c["spikes"] for c in feat["columns"].values()),
        "folded": round(folded, digits),
        "headline": round(stats.blend(load["mean"], folded, feat["rows"], weights[name]), digits),
    }
with open(snakemake.input.summ) as f:
    parts = json.load(f)["parts"]
with open(snakemake.input.index) as f:
    scores = {n: float(s) for n, _, s in (line.rstrip("\n").split("\t") for line in f)}
report = {
    "group": snakemake.wildcards.g,
    "samples": samples,
    "parts": {n: {**p, "score": round(scores[n], digits)} for n, p in parts.items()},
}
with open(snakemake.output[0], "w") as f:
    json.dump(report, f, sort_keys=True, indent=1)
    f.write("\n")
