import os
from pathlib import Path

Path(snakemake.output[0]).write_text(f"plain {snakemake.rule}\n")
Path(snakemake.log[0]).write_text(os.environ.get("SLURM_JOB_ID", "here") + "\n")
