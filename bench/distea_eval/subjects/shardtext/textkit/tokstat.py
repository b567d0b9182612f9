"""Token statistics of one shard.

python -m textkit.tokstat shards/news-00.tsv stats/news-00.json
"""

import json
import sys

from .corpus import iter_clean
from .features import FeatureVector, extract


def type_token_ratio(tokens):
    if not tokens:
        return 0.0
    return round(len(set(tokens)) / len(tokens), 4)


def hapax(counts):
    return sorted(token for token, count in counts.items() if count == 1)


def shard_stats(rows):
    counts = {}
    total = FeatureVector({})
    all_tokens = []
    n = 0
    for _label, tokens in rows:
        n += 1
        all_tokens.extend(tokens)
        for token in tokens:
            counts[token] = counts.get(token, 0) + 1
        total = total + extract(tokens)
    mean = total.scaled(1.0 / n) if n else total
    return {
        "records": n,
        "tokens": len(all_tokens),
        "ttr": type_token_ratio(all_tokens),
        "hapax": len(hapax(counts)),
        "features": {name: round(value, 4) for name, value in sorted(mean.values.items())},
        "dominant": mean.dominant,
    }


def main(argv):
    if len(argv) != 2:
        print("usage: python -m textkit.tokstat SHARD OUTPUT", file=sys.stderr)
        return 2
    shard, output = argv
    stats = shard_stats(iter_clean(shard))
    stats["shard"] = shard.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    with open(output, "w", encoding="utf-8") as out:
        json.dump(stats, out, indent=1, sort_keys=True)
        out.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
