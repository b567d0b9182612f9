"""Accuracy report over all verdicts: overall, per label, and the confusion matrix."""

import csv
import json

from claimcheck import LABELS, write_atomically

rows = []
for path in snakemake.input.verdicts:
    with open(path, encoding="utf-8") as f:
        rows.extend(csv.DictReader(f, delimiter="\t"))
confusion = {t: {p: 0 for p in LABELS} for t in LABELS}
for row in rows:
    confusion[row["label"]][row["predicted"]] += 1
correct = sum(confusion[t][t] for t in LABELS)
per_label = {}
for label in LABELS:
    predicted = sum(confusion[t][label] for t in LABELS)
    actual = sum(confusion[label].values())
    precision = confusion[label][label] / predicted if predicted else 0.0
    recall = confusion[label][label] / actual if actual else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    per_label[label] = {
        "precision": round(precision, 4),
        "recall": round(recall, 4),
        "f1": round(f1, 4),
        "support": actual,
    }
report = {
    "claims": len(rows),
    "accuracy": round(correct / len(rows), 4) if rows else 0.0,
    "per_label": per_label,
    "confusion": confusion,
}
write_atomically(snakemake.output.json, lambda tmp: tmp.write_text(json.dumps(report, indent=2)))

lines = [
    f"# Claim verification: {len(rows)} claims, accuracy {report['accuracy']:.1%}",
    "",
    "| label | precision | recall | f1 | support |",
    "|---|---|---|---|---|",
]
for label, m in per_label.items():
    lines.append(
        f"| {label} | {m['precision']:.3f} | {m['recall']:.3f} | {m['f1']:.3f} | {m['support']} |"
    )
lines += [
    "",
    "Confusion (rows: true label, columns: predicted):",
    "",
    "| | " + " | ".join(LABELS) + " |",
    "|---" * (len(LABELS) + 1) + "|",
]
for t in LABELS:
    lines.append(f"| {t} | " + " | ".join(str(confusion[t][p]) for p in LABELS) + " |")
write_atomically(snakemake.output.md, lambda tmp: tmp.write_text("\n".join(lines) + "\n"))
