"""Templates of the fresh-exit workflow: the same trivial state in both isolation modes; the
template imports nothing, so torch is first imported inside an invocation."""

from stickyinvoc import template


@template("forked")  # fork: the default
def forked():
    return {"calls": 0}


@template("direct", isolation="direct")
def direct():
    return {"calls": 0}


def _seeded():
    """A template that seeds every global generator before initialising its model, as
    reproducible ML code does: a fresh job that builds it draws the same numbers every time."""
    import random

    import numpy as np
    import torch

    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    return {"model": torch.nn.Linear(4, 2), "first": random.random()}


@template("forked_seeded")
def forked_seeded():
    return _seeded()


@template("direct_seeded", isolation="direct")
def direct_seeded():
    return _seeded()
