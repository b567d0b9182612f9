import distea.autotrace  # noqa: F401

# isort: split
import json

lines = open(snakemake.input[0]).read().split()
voc = json.load(open("cache/vocab.json"))
open(snakemake.output[0], "w").write(" ".join(str(voc[w]) for w in lines) + "\n")
