import os

import probe

with open(snakemake.output[0], "w") as out:
    out.write(probe.report(globals()))
os.environ["HOSTILE_X"] = snakemake.params.value
os.putenv("HOSTILE_Y", snakemake.params.value)
os.environ.pop("HOME", None)
