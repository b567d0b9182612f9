import distea.autotrace  # noqa: F401

# isort: split
import os
import subprocess

env = {"PATH": os.environ["PATH"], "PYTHONPATH": os.getcwd()}
subprocess.run(["bash", "-c", "python3 tools/t.py " + snakemake.output[0]], env=env, check=True)
