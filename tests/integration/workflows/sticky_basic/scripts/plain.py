from pathlib import Path

Path(snakemake.output[0]).write_text(f"plain {snakemake.rule}\n")
