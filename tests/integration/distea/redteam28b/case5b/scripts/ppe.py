import distea.autotrace  # noqa: F401

# isort: split
from concurrent.futures import ProcessPoolExecutor

from wfh import work

if __name__ == "__main__":
    with ProcessPoolExecutor(2) as ex:
        r = list(ex.map(work.psq, [1, 2, 3]))
    open(snakemake.output[0], "w").write(f"{r}\n")
