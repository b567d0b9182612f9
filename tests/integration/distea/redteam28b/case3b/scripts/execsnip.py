import distea.autotrace  # noqa: F401

# isort: split
ns = {}
exec(open("wf/snip.py").read(), ns)
open(snakemake.output[0], "w").write("{}\n".format(ns["snip"](1)))
