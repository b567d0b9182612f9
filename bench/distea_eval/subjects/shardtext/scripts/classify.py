import distea.autotrace  # noqa: F401

# isort: split

import json
import os

from textkit.corpus import iter_clean
from textkit.model import NaiveBayes, blend, decide, softmax

import stickyinvoc

state = stickyinvoc.state(snakemake)
lexicon, lookup = state["model"], state["lookup"]
nb = NaiveBayes.load(snakemake.input.model)

rows = []
for number, (label, tokens) in enumerate(iter_clean(snakemake.input.shard)):
    nb_probs = softmax(nb.scores(tokens))
    lex_probs = softmax(lexicon.scores(tokens, lookup=lookup))
    probs = blend(nb_probs, lex_probs, snakemake.params.blend)
    pred, margin = decide(nb.labels, probs, snakemake.params.margin)
    rows.append(
        {
            "i": number,
            "label": label,
            "pred": pred,
            "margin": round(margin, 4),
            "probs": [round(float(p), 4) for p in probs],
        }
    )

shard = os.path.splitext(os.path.basename(snakemake.input.shard))[0]
with open(snakemake.output[0], "w", encoding="utf-8") as out:
    json.dump({"shard": shard, "labels": list(nb.labels), "rows": rows}, out, indent=1)
    out.write("\n")
