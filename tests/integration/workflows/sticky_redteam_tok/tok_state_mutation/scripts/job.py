import json
import stickyinvoc

I = int(snakemake.wildcards.i)
tok = stickyinvoc.state(snakemake)["tok"]
obs = {"padding_side_at_start": tok.padding_side, "vocab_at_start": len(tok),
       "backend_padding_at_start": repr(tok.backend_tokenizer.padding),
       "backend_truncation_at_start": repr(tok.backend_tokenizer.truncation)}
if I == 1:
    # the first job adapts the tokenizer for its own use
    tok.padding_side = "left"
    tok.add_tokens(["<claim>"])
    tok.backend_tokenizer.enable_truncation(max_length=6)
enc = tok([f"<claim> number {I} is long enough to truncate", "short"], padding=True)
obs["input_ids"] = enc["input_ids"]
obs["raw_backend_ids"] = [e.ids for e in tok.backend_tokenizer.encode_batch(["<claim> a b c d e f g h", "x"])]
with open(snakemake.output[0], "w") as f:
    for k in sorted(obs):
        f.write(f"{k}: {json.dumps(obs[k])}\n")
with open(snakemake.log[0], "w") as f:
    f.write("ok\n")
