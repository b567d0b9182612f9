# File descriptors 1 and 2 pointed at the log, then closed.
import os
import subprocess

import probe

with open(snakemake.output[0], "w") as out:
    out.write(probe.report(globals()))
fd = os.open(snakemake.log[0], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.dup2(fd, 1)
os.dup2(fd, 2)
os.close(fd)
subprocess.run(["echo", "child process output", snakemake.params.value], check=True)
os.close(1)
os.close(2)
