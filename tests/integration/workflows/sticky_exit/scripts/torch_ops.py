import decimal

import numpy as np
import torch

with open(snakemake.output[0], "w") as f:
    print("torch.ops", hasattr(torch, "ops"), file=f)
    print("decimal prec", decimal.getcontext().prec, file=f)
    print("printoptions", np.get_printoptions()["precision"], file=f)
    seeded = torch.rand(1, generator=torch.Generator().manual_seed(7))
    print("from a job's seeded stream", bool(torch.rand(1) == seeded), file=f)
decimal.getcontext().prec = 5
np.set_printoptions(precision=2)
torch.manual_seed(7)
