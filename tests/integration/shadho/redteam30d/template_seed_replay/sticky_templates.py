import random

import numpy as np
import torch
from stickyinvoc import template


@template("rtseed")
def rtseed():
    np.random.seed(7)
    X = np.random.rand(20)
    random.seed(7)
    noise = [random.random() for _ in range(5)]
    torch.manual_seed(7)
    W = torch.rand(5)
    return {"X": X, "noise": noise, "W": W}
