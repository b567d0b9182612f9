import distea.autotrace  # noqa: F401

# isort: split
import json

from etl.schema import Table
from etl.steps import Pipeline

cfg = dict(snakemake.config["clean"])
cfg["max_missing"] = snakemake.params.max_missing
pipeline = Pipeline.from_config(cfg)
table = pipeline.run(Table.from_csv(snakemake.input[0], name=snakemake.wildcards.s))
table.to_csv(snakemake.output.table)
with open(snakemake.output.log, "w") as f:
    json.dump(pipeline.summary(), f, sort_keys=True)
    f.write("\n")
