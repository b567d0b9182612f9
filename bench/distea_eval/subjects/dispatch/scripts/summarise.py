import distea.autotrace  # noqa: F401

# isort: split
import json

from ops import hooks

with open(snakemake.input[0]) as f:
    values = [float(x) for x in f.read().split()]
values = hooks.build().run(values)
with open(snakemake.output[0], "w") as f:
    json.dump(hooks.describe(values, snakemake.params.digits), f, sort_keys=True)
