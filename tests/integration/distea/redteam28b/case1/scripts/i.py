import distea.autotrace  # noqa: F401

# isort: split
import os

from wf import helper

out = snakemake.output[0]
pid = os.fork()
if pid == 0:
    open(out, "w").write(f"{helper.work(21)}\n")
    os._exit(0)
os.waitpid(pid, 0)
