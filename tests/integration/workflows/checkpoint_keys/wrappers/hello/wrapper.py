open(snakemake.output[0], "w").write("hello v1\n")
