import distea.autotrace  # noqa: F401

# isort: split

import os

from textkit.corpus import read_clean, sample_of

shard_dir = snakemake.input.shards
lines = ["shard\tsample\trecords\tlabels"]
for name in sorted(os.listdir(shard_dir)):
    if not name.endswith(".tsv"):
        continue
    weight, rows = read_clean(os.path.join(shard_dir, name))
    labels = {}
    for label, _tokens in rows:
        labels[label] = labels.get(label, 0) + 1
    mix = ",".join(f"{k}:{labels[k]}" for k in sorted(labels))
    lines.append(f"{name[:-4]}\t{sample_of(name)}\t{len(rows)}\t{mix}")

with open(snakemake.output[0], "w", encoding="utf-8") as out:
    out.write("\n".join(lines) + "\n")
