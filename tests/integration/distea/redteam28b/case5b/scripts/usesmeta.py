import distea.autotrace  # noqa: F401

# isort: split
import json

v = json.load(open("meta/info.json"))["version"]
open(snakemake.output[0], "w").write(open(snakemake.input[0]).read().strip() + f" v{v}\n")
