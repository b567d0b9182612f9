import distea.autotrace  # noqa: F401

# isort: split
import yaml

cfg = yaml.safe_load(open("config.yaml"))
open(snakemake.output[0], "w").write("thresh={}\n".format(cfg["thresh"]))
