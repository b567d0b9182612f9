import distea.autotrace  # noqa: F401

# isort: split

import json
from multiprocessing import Pool

from textkit import LABELS
from textkit.metrics import merge_samples, per_label_f1, shard_summary, top_confusions


def load_rows(path):
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)["rows"]


def main():
    paths = list(snakemake.input.preds)
    pool = Pool(2)
    summaries = pool.map(shard_summary, paths)
    pool.close()
    pool.join()

    stats = {}
    for path in snakemake.input.stats:
        with open(path, encoding="utf-8") as handle:
            entry = json.load(handle)
        stats[entry["shard"]] = {"ttr": entry["ttr"], "dominant": entry["dominant"]}

    result = {
        "shards": summaries,
        "samples": merge_samples(summaries),
        "f1": per_label_f1([load_rows(p) for p in paths], LABELS),
        "top_confusions": top_confusions(summaries, k=snakemake.params.top_k),
        "stats": stats,
    }
    with open(snakemake.output[0], "w", encoding="utf-8") as out:
        json.dump(result, out, indent=1, sort_keys=True)
        out.write("\n")


if __name__ == "__main__":
    main()
