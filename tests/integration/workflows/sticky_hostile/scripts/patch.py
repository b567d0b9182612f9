import builtins
import json

import probe

with open(snakemake.output[0], "w") as out:
    out.write(probe.report(globals()))
json.dumps = lambda *args, **kwargs: "PATCHED " + snakemake.params.value
json.hostile_helper = lambda: None
builtins.print = lambda *args, **kwargs: None
