import os
import tempfile

import probe

with open(snakemake.output[0], "w") as out:
    out.write(probe.report(globals()))
os.environ["HOSTILE_X"] = snakemake.params.value
os.putenv("HOSTILE_Y", snakemake.params.value)
os.environ.pop("HOME", None)
os.environ["TMPDIR"] = "/hostile-nonexistent-tmp"
os.environ["OMP_NUM_THREADS"] = "7"
tempfile.gettempdir()  # caches a folder in the tempfile module
