import probe
from snakemake.shell import shell

with open(snakemake.output[0], "w") as out:
    out.write(probe.report(globals()))
shell.executable("/bin/sh")
shell.prefix("set -e; ")
shell("echo {snakemake.params.value} >> {snakemake.output[0]}")
