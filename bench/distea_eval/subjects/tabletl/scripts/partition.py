import distea.autotrace  # noqa: F401

# isort: split
import os

from etl import stats
from etl.schema import Table

out = snakemake.output[0]
os.makedirs(out, exist_ok=True)
buckets = {}
header = None
for src, path in enumerate(snakemake.input.clean):
    table = Table.from_csv(path)
    header = ("src", *table.header)
    for row, load in zip(table.rows, table.column("load"), strict=True):
        buckets.setdefault(stats.bucket_of(load), []).append([float(src), *row])
manifest = []
for name in sorted(buckets):
    rows = buckets[name]
    if len(rows) < snakemake.params.min_rows:
        manifest.append(f"{name}\tskipped\t{len(rows)}\n")
        continue
    Table(header, rows).to_csv(os.path.join(out, f"{name}.csv"))
    manifest.append(f"{name}\twritten\t{len(rows)}\n")
with open(os.path.join(out, "manifest.txt"), "w") as f:
    f.writelines(manifest)
