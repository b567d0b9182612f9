# A child never joined: a fresh interpreter joins it at exit (multiprocessing's exit handler).
import multiprocessing
import time


def work(path):
    time.sleep(1.0)
    with open(path, "w") as f:
        f.write("written by the child, after a second\n")


multiprocessing.Process(target=work, args=(snakemake.output[0],)).start()
