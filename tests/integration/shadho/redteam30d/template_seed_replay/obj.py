"""The template seeds numpy/random/torch with 7 and draws while building; the objective
does not touch the generators at import. Each trial checks the globals continue exactly
where the build left them (same draws in every trial, as in a fresh process that builds
the template), then consumes draws and reseeds."""
import random
import time

import numpy as np
import torch


def evaluate(params, state=None, threads=1):
    x = float(params["x"])
    rn = np.random.RandomState(7)
    rn.rand(20)
    rp = random.Random(7)
    for _ in range(5):
        rp.random()
    rt = torch.Generator().manual_seed(7)
    torch.rand(5, generator=rt)
    ok = [
        bool(np.random.rand() == rn.rand()),
        bool(random.random() == rp.random()),
        bool(torch.rand(1).item() == torch.rand(1, generator=rt).item()),
        bool(np.allclose(state["X"], np.random.RandomState(7).rand(20))),
    ]
    np.random.seed(int(x * 1e6))
    random.seed(int(x * 1e6))
    torch.manual_seed(int(x * 1e6))
    time.sleep(0.1)
    return {"loss": (x - 0.3) ** 2, "replay_ok": ok}
