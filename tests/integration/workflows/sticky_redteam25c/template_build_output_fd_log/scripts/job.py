import json, os, sys
fd = os.open(snakemake.log[0], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.dup2(fd, 1)
os.dup2(fd, 2)
os.close(fd)
import stickyinvoc

state = stickyinvoc.state(snakemake)
print("job body")
with open(snakemake.output[0], "w") as fh:
    json.dump(state, fh)
