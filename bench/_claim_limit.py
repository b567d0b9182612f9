"""The physical limit for claim verification: one process, model loaded once, a loop.

``python bench/_claim_limit.py WORKFLOW_DIR OUT_DIR ID [ID ...]`` verifies the given claims
exactly as the workflow's verify invocations do (same features, head and output format), but
with no Snakemake and no executor in between. Used by bench/sticky_vs_local.py.
"""

import sys
from pathlib import Path

workflow = Path(sys.argv[1])
out_dir = Path(sys.argv[2])
ids = sys.argv[3:]
sys.path.insert(0, str(workflow / "scripts"))

from claimcheck import (  # noqa: E402
    features,
    load_encoder,
    load_head,
    predict,
    read_claims,
    write_atomically,
)

encoder = load_encoder()
head = load_head(workflow / "results" / "head.npz")
claims = {c.claim_id: c for c in read_claims(workflow / "data" / "claims.tsv", split="test")}
out_dir.mkdir(parents=True, exist_ok=True)
for claim_id in ids:
    claim = claims[claim_id]
    (label,), (conf,) = predict(head, features(encoder, [claim]))

    def write(tmp: Path, claim=claim, label=label, conf=conf) -> None:
        tmp.write_text(
            "claim_id\tlabel\tpredicted\tconfidence\n"
            f"{claim.claim_id}\t{claim.label}\t{label}\t{conf:.4f}\n"
        )

    write_atomically(out_dir / f"{claim_id}.tsv", write)
