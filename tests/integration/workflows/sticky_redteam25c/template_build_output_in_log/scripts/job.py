import json, sys
sys.stderr = open(snakemake.log[0], "w")
import stickyinvoc

state = stickyinvoc.state(snakemake)
print("job body", file=sys.stderr)
with open(snakemake.output[0], "w") as fh:
    json.dump(state, fh)
