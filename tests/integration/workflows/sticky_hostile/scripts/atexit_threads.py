# An atexit handler and a non-daemon thread: a fresh interpreter finishes both before it exits,
# so the job's output is complete when Snakemake checks it.
import atexit
import threading
import time

import probe

with open(snakemake.output[0], "w") as out:
    out.write(probe.report(globals()))


def late_line() -> None:
    time.sleep(0.3)
    with open(snakemake.output[0], "a") as out:
        out.write("thread finished\n")


atexit.register(lambda: open(snakemake.output[0], "a").write("atexit ran\n"))
threading.Thread(target=late_line).start()
