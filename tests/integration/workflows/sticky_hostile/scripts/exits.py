import sys

import probe

with open(snakemake.output[0], "w") as out:
    out.write(probe.report(globals()))
sys.exit(0)
