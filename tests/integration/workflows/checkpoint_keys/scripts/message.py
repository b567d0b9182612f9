open(snakemake.output[0], "w").write("message\n")
