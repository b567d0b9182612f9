import sys
sys.stderr = open(snakemake.log[0], "w")  # Snakemake's documented idiom for a script's log
import stickyinvoc

I = int(snakemake.wildcards.i)
tok = stickyinvoc.state(snakemake)["tok"]
print(f"job {I} starts", file=sys.stderr)
ids = tok.encode(" ".join(["word"] * (520 + I)))  # longer than model_max_length: transformers warns
text = tok.batch_decode(ids[:5])  # a single sequence: transformers' warning_once
print(f"job {I}: {len(ids)} ids, {text!r}", file=sys.stderr)
with open(snakemake.output[0], "w") as f:
    f.write(f"{len(ids)} {text!r}\n")
