import json, os, sys
import stickyinvoc

TV = ["OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
      "GOTO_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"]
obs = {}


def envtv():
    return {k: os.environ.get(k, "<unset>") for k in TV}


def pools():
    import threadpoolctl
    return sorted(f"{d['internal_api']}:{os.path.basename(d['filepath'])}:{d['num_threads']}"
                  for d in threadpoolctl.threadpool_info())


def torchinfo():
    import torch
    return {"num_threads": torch.get_num_threads(),
            "interop": torch.get_num_interop_threads(),
            "parallel_info": torch.__config__.parallel_info().splitlines()}


def done():
    with open(snakemake.output[0], "w") as f:
        json.dump(obs, f, indent=1, sort_keys=True, default=repr)
        f.write("\n")


I = int(snakemake.wildcards.i)
obs["snakemake_threads"] = snakemake.threads
state = stickyinvoc.state(snakemake)
obs["env"] = envtv()
obs["torch"] = torchinfo()
import torch
x = torch.ones(64, 64)
obs["mm"] = float((x @ x).sum())
obs["torch_after_mm"] = torch.get_num_threads()
done()
