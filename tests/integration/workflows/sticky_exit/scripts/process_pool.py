# A pool never shut down: a fresh interpreter finishes its queued work and shuts it down.
import concurrent.futures
import time


def work(path):
    time.sleep(0.5)
    with open(path, "w") as f:
        f.write("written by the pool\n")


pool = concurrent.futures.ProcessPoolExecutor(max_workers=1)
pool.submit(work, snakemake.output[0])
