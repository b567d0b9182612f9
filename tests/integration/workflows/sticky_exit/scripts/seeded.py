# Draws from every global generator, unseeded by the script: the template seeded them, so a
# fresh job draws the same numbers every time, and so must every sticky invocation.
import random

import numpy as np
import torch

import stickyinvoc

state = stickyinvoc.state(snakemake)
with open(snakemake.output[0], "w") as out:
    print("random", random.random(), file=out)
    print("numpy", np.random.random(), file=out)
    print("torch", torch.rand(2).tolist(), file=out)
    print("model", state["model"].weight.sum().item(), file=out)
