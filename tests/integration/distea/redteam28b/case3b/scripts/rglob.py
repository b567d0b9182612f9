import distea.autotrace  # noqa: F401

# isort: split
from pathlib import Path

files = sorted(Path("data/samples").rglob("*.txt"))
open(snakemake.output[0], "w").write("".join(p.read_text() for p in files))
