"""Verify one batch of claims against their evidence (a sticky invocation).

The encoder is the warm state; the verdict head is cached in it too (keyed by file and
modification time: a direct-mode worker reads it once). The batch's rows of the claims table
come as a param: the Snakefile reads the table once, not every job.
"""

import os

from claimcheck import Claim, features, load_head, predict, write_atomically

import stickyinvoc

encoder = stickyinvoc.state(snakemake)


def cached_file(path, load):
    return encoder.cached((load.__name__, path, os.stat(path).st_mtime_ns), lambda: load(path))


head = cached_file(snakemake.input.head, load_head)
claims = [Claim(**row) for row in snakemake.params.claims]
labels, confidence = predict(head, features(encoder, claims))


def write(tmp):
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("claim_id\tlabel\tpredicted\tconfidence\n")
        for claim, label, conf in zip(claims, labels, confidence, strict=True):
            f.write(f"{claim.claim_id}\t{claim.label}\t{label}\t{conf:.4f}\n")


write_atomically(snakemake.output[0], write)
