"""The physical limit for claim verification: one process, model loaded once, a loop.

``python bench/_claim_limit.py WORKFLOW_DIR OUT_DIR [ID ...] [--claims TSV] [--ids-file FILE]``
verifies the given claims (``--ids-file``: one id a line) exactly as the workflow's verify
invocations do (same features, head and output format), but with no Snakemake and no executor
in between. ``--claims``: the claims table (default: the workflow's data/claims.tsv). Used by
bench/sticky_vs_local.py and bench/scale_claims.py.
"""

import argparse
import sys
from pathlib import Path

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument("workflow", type=Path)
parser.add_argument("out_dir", type=Path)
parser.add_argument("ids", nargs="*")
parser.add_argument("--claims", type=Path, default=None)
parser.add_argument("--ids-file", type=Path, default=None)
args = parser.parse_args()
workflow, out_dir = args.workflow, args.out_dir
ids = list(args.ids)
if args.ids_file is not None:
    ids += args.ids_file.read_text().split()
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
table = args.claims or workflow / "data" / "claims.tsv"
claims = {c.claim_id: c for c in read_claims(table, split="test")}
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
