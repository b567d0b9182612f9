import hashlib, json, os
import stickyinvoc

obs = {}
I = int(snakemake.wildcards.i)
state = stickyinvoc.state(snakemake)
import torch
tok, model = state["tok"], state["model"]
obs["snakemake_threads"] = snakemake.threads
obs["OMP_NUM_THREADS"] = os.environ.get("OMP_NUM_THREADS", "<unset>")
obs["torch_num_threads"] = torch.get_num_threads()
texts = [f"claim {I}: the Eiffel Tower is in Paris", "Paris is the capital of France and has many towers " * 4, "no"]
batch = tok(texts, padding=True, return_tensors="pt")
with torch.no_grad():
    h = model(**batch).last_hidden_state
m = batch["attention_mask"].unsqueeze(-1).float()
emb = torch.nn.functional.normalize((h * m).sum(1) / m.sum(1), dim=-1)
obs["shape"] = list(emb.shape)
obs["emb_sha256"] = hashlib.sha256(emb.numpy().tobytes()).hexdigest()
obs["cos01"] = float(emb[0] @ emb[1]).hex()
if snakemake.params.mode == "fork":
    import json as _j
    obs["canary"] = getattr(_j.JSONDecoder, "_rt_canary", 0)
    _j.JSONDecoder._rt_canary = obs["canary"] + 1
with open(snakemake.output[0], "w") as f:
    for k in sorted(obs):
        f.write(f"{k}: {json.dumps(obs[k])}\n")
with open(snakemake.log[0], "w") as f:
    f.write("ok\n")
