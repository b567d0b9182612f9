import distea.autotrace  # noqa: F401

# isort: split
import os
import subprocess
import sys

from etl.schema import Table

with os.scandir(snakemake.input[0]) as entries:
    paths = sorted(e.path for e in entries if e.is_file() and e.name.endswith(".csv"))
rows = {os.path.basename(p): len(Table.from_csv(p).rows) for p in paths}
child = subprocess.run(
    [sys.executable, "-m", "etl.cli", "score", "--window", str(snakemake.params.window), *paths],
    check=True,
    capture_output=True,
    text=True,
)
with open(snakemake.output[0], "w") as f:
    for line in child.stdout.splitlines():
        name, score = line.split("\t")
        f.write(f"{name}\t{rows[name]}\t{score}\n")
