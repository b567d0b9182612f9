import os
import sys

import probe

with open(snakemake.output[0], "w") as out:
    out.write(probe.report(globals()))
os.umask(0o077)
sys.setrecursionlimit(200)
import locale  # noqa: E402

locale.setlocale(locale.LC_ALL, "C.UTF-8")
