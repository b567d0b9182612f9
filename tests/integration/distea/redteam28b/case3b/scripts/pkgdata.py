import distea.autotrace  # noqa: F401

# isort: split
import json
import pkgutil

p = json.loads(pkgutil.get_data("wf", "params.json"))
open(snakemake.output[0], "w").write("{}\n".format(p["alpha"]))
