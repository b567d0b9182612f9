import random

import probe

with open(snakemake.output[0], "w") as out:
    out.write(probe.report(globals()))
    random.seed(42)
    out.write(f"seeded draw: {random.random()!r}\n")
random.seed(42)
