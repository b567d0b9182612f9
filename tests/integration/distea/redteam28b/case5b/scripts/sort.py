import distea.autotrace  # noqa: F401

# isort: split
import subprocess

with open(snakemake.output[0], "w") as out:
    subprocess.run(["sort", snakemake.config["ref"]], stdout=out, check=True)
