# Not traced on purpose: no `import distea.autotrace` here.
import json

from textkit.metrics import ratio

with open(snakemake.input.metrics, encoding="utf-8") as handle:
    metrics = json.load(handle)
with open(snakemake.input.vocab, encoding="utf-8") as handle:
    vocab = json.load(handle)
with open(snakemake.input.inventory, encoding="utf-8") as handle:
    inventory = [line.rstrip("\n").split("\t") for line in handle][1:]

lines = ["# Sharded text classification", ""]
lines.append(f"vocabulary: {len(vocab['tokens'])} tokens (min_count {vocab['min_count']})")
lines.append(f"shards: {len(inventory)}")
lines.append("")
lines.append("| sample | shards | records | uncertain | accuracy |")
lines.append("|---|---|---|---|---|")
total_n = total_correct = total_uncertain = 0
for sample, row in sorted(metrics["samples"].items()):
    lines.append(
        f"| {sample} | {row['shards']} | {row['n']} | {row['uncertain']} | {row['accuracy']:.4f} |"
    )
    total_n += row["n"]
    total_correct += row["correct"]
    total_uncertain += row["uncertain"]
lines.append("")
lines.append(f"overall accuracy: {ratio(total_correct, total_n - total_uncertain):.4f}")
lines.append("F1: " + ", ".join(f"{k} {v:.4f}" for k, v in sorted(metrics["f1"].items())))
lines.append("top confusions: " + ", ".join(f"{k} ({n})" for k, n in metrics["top_confusions"]))

with open(snakemake.output[0], "w", encoding="utf-8") as out:
    out.write("\n".join(lines) + "\n")
