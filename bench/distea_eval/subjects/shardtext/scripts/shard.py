import distea.autotrace  # noqa: F401

# isort: split

import os

from textkit.corpus import iter_shards, read_clean, shard_name

size = int(snakemake.config["shards"]["size"])
out_dir = snakemake.output[0]
os.makedirs(out_dir, exist_ok=True)

for sample, path in zip(snakemake.params.samples, snakemake.input, strict=False):
    weight, rows = read_clean(path)
    for index, chunk in enumerate(iter_shards(rows, size)):
        with open(os.path.join(out_dir, shard_name(sample, index)), "w", encoding="utf-8") as out:
            out.write(f"#weight\t{weight:g}\n")
            for label, tokens in chunk:
                out.write(f"{label}\t{' '.join(tokens)}\n")
