import distea.autotrace  # noqa: F401

# isort: split
import concurrent.futures
import multiprocessing

from pkg.work import spawned

if __name__ == "__main__":
    n = int(open(snakemake.input[0]).read().split()[0])
    with concurrent.futures.ProcessPoolExecutor(
        1, mp_context=multiprocessing.get_context("spawn")
    ) as ex:
        v = list(ex.map(spawned, [n]))
    open(snakemake.output[0], "w").write(f"{v[0]}\n")
