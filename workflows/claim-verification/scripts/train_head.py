"""Fit the verdict head on the train split's MiniLM features (a sticky invocation)."""

import numpy as np
from claimcheck import features, read_claims, train_head, write_atomically

import stickyinvoc

encoder = stickyinvoc.state(snakemake)
claims = read_claims(snakemake.input.claims, split="train")
head = train_head(
    features(encoder, claims), [c.label for c in claims], epochs=int(snakemake.params.epochs)
)
write_atomically(snakemake.output.head, lambda tmp: np.savez(tmp, **head))
