import mypkg

open(snakemake.output[0], "w").write(f"{mypkg.VALUE}\n")
