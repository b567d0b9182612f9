import distea.autotrace  # noqa: F401

# isort: split
import glob

files = sorted(glob.glob("data/samples/*.txt"))
open(snakemake.output[0], "w").write("".join(open(p).read() for p in files))
