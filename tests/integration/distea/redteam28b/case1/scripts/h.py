import distea.autotrace  # noqa: F401

# isort: split
import atexit

from wf import helper

out = snakemake.output[0]


def finish():
    open(out, "w").write(helper.fmt(42) + "\n")


atexit.register(finish)
