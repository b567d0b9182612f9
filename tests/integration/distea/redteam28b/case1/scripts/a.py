import distea.autotrace  # noqa: F401

# isort: split
import json
import os

from wf import helper

lines = open(snakemake.input[0]).read().split()
os.makedirs("cache", exist_ok=True)
json.dump(helper.vocab(lines), open("cache/vocab.json", "w"))
open(snakemake.output[0], "w").write(f"{len(lines)}\n")
