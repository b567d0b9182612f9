import distea.autotrace  # noqa: F401

# isort: split
from concurrent.futures import ThreadPoolExecutor

from wfh import work

with ThreadPoolExecutor(2) as ex:
    r = list(ex.map(work.tsq, [1, 2, 3]))
open(snakemake.output[0], "w").write(f"{r}\n")
