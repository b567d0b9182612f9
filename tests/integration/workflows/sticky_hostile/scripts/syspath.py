import sys

import probe

with open(snakemake.output[0], "w") as out:
    out.write(probe.report(globals()))
sys.path.insert(0, "/hostile-nonexistent")
sys.path.append("/hostile-nonexistent-2")
sys.argv.append("--hostile")
