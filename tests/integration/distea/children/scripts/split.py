import distea.autotrace  # noqa: F401

# isort: split
import os

from pkg.work import shard_count

n = int(open(snakemake.input[0]).read().split()[0])
os.makedirs(snakemake.output[0], exist_ok=True)
for i in range(shard_count(n)):
    open(os.path.join(snakemake.output[0], f"{i}.txt"), "w").write(f"{n + i}\n")
