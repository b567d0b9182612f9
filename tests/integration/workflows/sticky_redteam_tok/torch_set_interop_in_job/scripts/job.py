import hashlib, json
import torch

obs = {}
# the usual way to pin torch's pools before any work
try:
    torch.set_num_interop_threads(1)
    obs["set_interop_before_state"] = "ok"
except RuntimeError as e:
    obs["set_interop_before_state"] = f"RuntimeError: {e}"
torch.set_num_threads(snakemake.threads)
import stickyinvoc
I = int(snakemake.wildcards.i)
state = stickyinvoc.state(snakemake)
tok, model = state["tok"], state["model"]
obs["interop"] = torch.get_num_interop_threads()
obs["intra"] = torch.get_num_threads()
batch = tok([f"claim {I} about Paris", "a second claim, longer than the first one"], padding=True, return_tensors="pt")
with torch.no_grad():
    h = model(**batch).last_hidden_state
obs["h_sha256"] = hashlib.sha256(h.numpy().tobytes()).hexdigest()
try:
    torch.set_num_interop_threads(2)
    obs["set_interop_after_work"] = "ok"
except RuntimeError as e:
    obs["set_interop_after_work"] = f"RuntimeError: {e}"
with open(snakemake.output[0], "w") as f:
    for k in sorted(obs):
        f.write(f"{k}: {json.dumps(obs[k])}\n")
with open(snakemake.log[0], "w") as f:
    f.write("ok\n")
