import distea.autotrace  # noqa: F401

# isort: split
import json

order = {g: i for i, g in enumerate(snakemake.config["groups"])}
lines = []
for path in snakemake.input:
    with open(path) as f:
        report = json.load(f)
    for name, sample in sorted(report["samples"].items()):
        lines.append((order[report["group"]], name, sample["headline"], sample["spikes"]))
    for name, part in sorted(report["parts"].items()):
        lines.append((order[report["group"]], name, part["score"], part["rows"]))
with open(snakemake.output[0], "w") as f:
    for rank, name, value, count in sorted(lines):
        f.write(f"{rank}\t{name}\t{value}\t{count}\n")
