
import json, os, sys
import stickyinvoc
state = stickyinvoc.state(snakemake)
import utils
obs = {"utils": utils.WHO, "rule": snakemake.rule, "utils_file": os.path.relpath(utils.__file__)}
with open(snakemake.output[0], "w") as f:
    json.dump(obs, f, indent=1, sort_keys=True)
