# Left open, never flushed: a fresh interpreter flushes and closes it at exit.
out = open(snakemake.output[0], "w")
out.write("line written, file never closed\n" * 100)
