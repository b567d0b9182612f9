import distea.autotrace  # noqa: F401

# isort: split

import json
import multiprocessing
from concurrent.futures import ProcessPoolExecutor

from textkit import LABELS
from textkit.features import class_counts
from textkit.model import NaiveBayes


def main():
    with open(snakemake.input.vocab, encoding="utf-8") as handle:
        vocab = json.load(handle)["tokens"]
    tasks = [(path, vocab, LABELS) for path in snakemake.input.clean]
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=2, mp_context=context) as executor:
        parts = list(executor.map(class_counts, tasks))
    counts = parts[0]
    for part in parts[1:]:
        counts = counts + part
    model = NaiveBayes(LABELS, vocab, counts, alpha=snakemake.config["model"]["alpha"])
    model.save(snakemake.output[0])


if __name__ == "__main__":
    main()
