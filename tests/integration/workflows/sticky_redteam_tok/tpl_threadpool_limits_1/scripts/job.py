import json, os
import stickyinvoc

I = int(snakemake.wildcards.i)
tok = stickyinvoc.state(snakemake)["tok"]
import numpy as np
import threadpoolctl
import torch
obs = {"OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"), "torch_threads": torch.get_num_threads(),
       "pools": sorted(f"{p['internal_api']}:{p['num_threads']}" for p in threadpoolctl.threadpool_info())}
enc = tok([f"claim {I}", "a second claim"], padding=True, return_tensors="np")
x = np.asarray(enc["input_ids"], dtype=np.float64)
obs["gram"] = (x @ x.T).tolist()
with open(snakemake.output[0], "w") as f:
    for k in sorted(obs):
        f.write(f"{k}: {json.dumps(obs[k])}\n")
with open(snakemake.log[0], "w") as f:
    f.write("ok\n")
