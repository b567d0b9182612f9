import distea.autotrace  # noqa: F401

# isort: split
import json

from qclib import signal

with open(snakemake.input[0]) as f:
    rows = signal.parse_csv(f.read())
values = signal.clip([v for _, v in rows], snakemake.params.clip)
values = signal.despike(values)
values = signal.moving_average(values, snakemake.params.window)
with open(snakemake.output[0], "w") as f:
    json.dump({"values": [round(v, 6) for v in values]}, f)
