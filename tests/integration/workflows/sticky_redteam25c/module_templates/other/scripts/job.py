import json
import stickyinvoc

state = stickyinvoc.state(snakemake)
with open(snakemake.output[0], 'w') as fh:
    json.dump(state, fh)
