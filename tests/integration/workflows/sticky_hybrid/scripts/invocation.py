from pathlib import Path

import stickyinvoc

state = stickyinvoc.state(snakemake)
i = int(snakemake.wildcards.i)
with open(snakemake.log[0], "w") as log:
    log.write(f"invocation {i}\n")
value = i * snakemake.params.scale * state["factor"]
Path(snakemake.output[0]).write_text(f"{i} {value}\n")
