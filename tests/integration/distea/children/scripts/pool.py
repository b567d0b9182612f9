import distea.autotrace  # noqa: F401

# isort: split
import multiprocessing

from pkg.work import square

n = int(open(snakemake.input[0]).read().split()[0])
pool = multiprocessing.get_context("fork").Pool(2)
values = pool.map(square, [n, n + 1])
pool.close()
pool.join()
open(snakemake.output[0], "w").write(f"{sum(values)}\n")
