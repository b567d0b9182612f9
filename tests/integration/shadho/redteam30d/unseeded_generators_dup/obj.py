"""Unseeded random sources: a fresh process draws different numbers every time. Module-level
generators made from the OS, the global generators (random via the 'temporary seed'
idiom), and multiprocessing's authkey. Each trial appends its draws to a file beside this
module and reports which sources repeated a value an earlier trial drew."""
import json
import multiprocessing as mp
import os
import random
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
DRAWS = os.path.join(HERE, "rt_draws.jsonl")

# temporary-seed idiom: a reproducible sample at import, global generator left random
_st = random.getstate()
random.seed(0)
SAMPLE = random.sample(range(100), 5)
random.setstate(_st)

RNG = np.random.default_rng()
PYRNG = random.Random()
PCG = np.random.Generator(np.random.PCG64())
TGEN = torch.Generator()
TGEN.seed()


def _previous():
    seen = {}
    try:
        with open(DRAWS) as f:
            for line in f:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                for k, v in rec.items():
                    seen.setdefault(k, set()).add(v)
    except FileNotFoundError:
        pass
    return seen


def evaluate(params, threads=1):
    x = float(params["x"])
    draws = {
        "np_global": float(np.random.random()),
        "py_global": random.random(),
        "torch_global": float(torch.rand(1).item()),
        "torch_initial_seed": int(torch.initial_seed()),
        "default_rng": float(RNG.random()),
        "random_Random": PYRNG.random(),
        "pcg64_generator": float(PCG.random()),
        "torch_Generator": float(torch.rand(1, generator=TGEN).item()),
        "mp_authkey": mp.current_process().authkey.hex(),
    }
    prev = _previous()
    dups = sorted(k for k, v in draws.items() if v in prev.get(k, ()))
    fd = os.open(DRAWS, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.write(fd, (json.dumps(draws) + "\n").encode())
    os.close(fd)
    time.sleep(0.15)
    return {"loss": (x - 0.3) ** 2, "dups": dups}
