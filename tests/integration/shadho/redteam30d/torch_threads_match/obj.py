"""torch's intra-op pool and OMP_NUM_THREADS in a trial should follow the trial's threads
(the class's cpus), as a fresh job started with OMP_NUM_THREADS=threads; the previous
trial's torch.set_num_threads must not carry over."""
import os
import time

import torch

torch.rand(8, 8) @ torch.rand(8, 8)  # warm-up at import (one thread under the worker)


def evaluate(params, threads=1):
    x = float(params["x"])
    seen = {
        "torch_threads_ok": torch.get_num_threads() == threads,
        "omp_env_ok": os.environ.get("OMP_NUM_THREADS") == str(threads),
    }
    torch.set_num_threads(3)
    a = torch.rand(64, 64)
    (a @ a).sum().item()
    time.sleep(0.1)
    out = {"loss": (x - 0.3) ** 2}
    out.update(seen)
    return out
