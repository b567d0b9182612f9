import random

import probe

with open(snakemake.output[0], "w") as out:
    out.write(probe.report(globals()))
    data = random.Random(snakemake.params.value).randbytes(4 * 1024 * 1024)
    out.write(data.hex())
print("x" * 200_000)
