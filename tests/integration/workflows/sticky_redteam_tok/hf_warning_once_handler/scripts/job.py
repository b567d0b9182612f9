import logging
import stickyinvoc

I = int(snakemake.wildcards.i)
tok = stickyinvoc.state(snakemake)["tok"]
import transformers
handler = logging.FileHandler(snakemake.log[0], mode="w")
handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
transformers.logging.add_handler(handler)  # send transformers' messages to the job's log too
logging.getLogger("transformers").warning("job %d starts", I)
ids = tok([f"claim {I} about tokenizers"])["input_ids"][0]
text = tok.batch_decode(ids)  # a single sequence, not a batch: warning_once
print(f"job {I}: {text!r}")
with open(snakemake.output[0], "w") as f:
    f.write(f"{ids} {text!r}\n")
