import distea.autotrace  # noqa: F401

# isort: split
import runpy

ns = runpy.run_path("wf/snip2.py")
open(snakemake.output[0], "w").write("{}\n".format(ns["RESULT"]))
