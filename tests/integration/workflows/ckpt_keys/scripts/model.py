import stickyinvoc

state = stickyinvoc.state(snakemake)
with open(snakemake.log[0], "w") as log:
    log.write("model\n")
with open(snakemake.output[0], "w") as out:
    out.write(f"{state['value']}\n")
