"""Scores of the predictions: per shard (pool workers), per sample, confusions."""

import collections
import json

from .corpus import sample_of


def ratio(numerator, denominator):
    if denominator == 0:
        return 0.0
    return round(numerator / denominator, 4)


def f1(tp, fp, fn):
    if tp == 0:
        return 0.0
    precision = tp / (tp + fp)
    recall = tp / (tp + fn)
    return round(2 * precision * recall / (precision + recall), 4)


def confusion(rows):
    pairs = collections.Counter()
    for row in rows:
        if row["pred"] != row["label"]:
            pairs[f"{row['label']}>{row['pred']}"] += 1
    return dict(sorted(pairs.items()))


def confidence_band(margin):
    if margin >= 0.5:
        return "high"
    if margin >= 0.2:
        return "medium"
    return "low"


def shard_summary(path):
    """Pool worker: the summary of one predictions file."""
    with open(path, encoding="utf-8") as handle:
        data = json.load(handle)
    rows = data["rows"]
    correct = sum(1 for row in rows if row["pred"] == row["label"])
    uncertain = sum(1 for row in rows if row["pred"] == "uncertain")
    bands = collections.Counter(confidence_band(row["margin"]) for row in rows)
    return {
        "shard": data["shard"],
        "sample": sample_of(data["shard"]),
        "n": len(rows),
        "correct": correct,
        "uncertain": uncertain,
        "accuracy": ratio(correct, len(rows) - uncertain),
        "bands": dict(sorted(bands.items())),
        "confusion": confusion(rows),
    }


def per_label_f1(rows_by_shard, labels):
    scores = {}
    for label in labels:
        tp = fp = fn = 0
        for rows in rows_by_shard:
            for row in rows:
                if row["pred"] == label and row["label"] == label:
                    tp += 1
                elif row["pred"] == label:
                    fp += 1
                elif row["label"] == label:
                    fn += 1
        scores[label] = f1(tp, fp, fn)
    return scores


def merge_samples(summaries):
    by_sample = collections.OrderedDict()
    for summary in sorted(summaries, key=lambda s: s["shard"]):
        total = by_sample.setdefault(
            summary["sample"], {"n": 0, "correct": 0, "uncertain": 0, "shards": 0}
        )
        total["n"] += summary["n"]
        total["correct"] += summary["correct"]
        total["uncertain"] += summary["uncertain"]
        total["shards"] += 1
    for total in by_sample.values():
        total["accuracy"] = ratio(total["correct"], total["n"] - total["uncertain"])
    return dict(by_sample)


def top_confusions(summaries, k=3):
    pairs = collections.Counter()
    for summary in summaries:
        pairs.update(summary["confusion"])
    ranked = sorted(pairs.items(), key=lambda item: (-item[1], item[0]))
    return ranked[: max(k, 0)]
