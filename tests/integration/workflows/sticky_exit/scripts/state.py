# The template's state changed by a job: a fresh job builds its own state.
import stickyinvoc

state = stickyinvoc.state(snakemake)
state["calls"] += 1
with open(snakemake.output[0], "w") as f:
    print("calls", state["calls"], file=f)
