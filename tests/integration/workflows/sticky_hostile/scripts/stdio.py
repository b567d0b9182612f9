# Replacing and closing the standard streams (killed the worker before issue 12).
import sys

import probe

with open(snakemake.output[0], "w") as out:
    out.write(probe.report(globals()))
with open(snakemake.log[0], "w") as f:
    sys.stderr = sys.stdout = f
    print("to the log:", snakemake.params.value)
    print("stderr too", file=sys.stderr)
sys.stdin.close()
