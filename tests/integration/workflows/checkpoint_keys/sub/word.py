open(snakemake.output[0], "w").write(snakemake.config["word"] + "\n")
