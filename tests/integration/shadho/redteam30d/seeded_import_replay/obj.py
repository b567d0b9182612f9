"""The objective seeds the global generators at import and draws from them (a synthetic
data set), as many scripts do. A fresh process importing it then starts each trial at
exactly the same point of every generator: each trial replays the import on private
generators and checks the global ones continue from there. Then it consumes draws."""
import random
import time

import numpy as np
import torch

np.random.seed(42)
DATA = np.random.rand(50, 3)
random.seed(42)
NOISE = [random.random() for _ in range(7)]
torch.manual_seed(42)
W = torch.rand(4, 2)


def evaluate(params, threads=1):
    x = float(params["x"])
    ref_np = np.random.RandomState(42)
    ref_np.rand(50, 3)
    ref_py = random.Random(42)
    for _ in range(7):
        ref_py.random()
    ref_t = torch.Generator().manual_seed(42)
    torch.rand(4, 2, generator=ref_t)
    ok = [
        bool(np.random.rand() == ref_np.rand()),
        bool(random.random() == ref_py.random()),
        bool(torch.rand(1).item() == torch.rand(1, generator=ref_t).item()),
    ]
    # consume more draws, as training would
    np.random.rand(1000)
    [random.random() for _ in range(100)]
    torch.rand(1000)
    time.sleep(0.1)
    return {"loss": (x - 0.3) ** 2, "replay_ok": ok}
