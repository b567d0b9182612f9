import distea.autotrace  # noqa: F401

# isort: split
import subprocess
import sys

subprocess.run(
    [sys.executable, "-m", "pkg.tool", snakemake.input[0], snakemake.output[0]], check=True
)
