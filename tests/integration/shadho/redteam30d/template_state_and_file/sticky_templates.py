import os

import numpy as np
from stickyinvoc import template

HERE = os.path.dirname(os.path.abspath(__file__))


@template("rtstate")
def rtstate():
    fh = open(os.path.join(HERE, "lines.txt"))
    header = fh.readline()  # the build consumes the header line
    state = {"calls": 0, "arr": np.zeros(4), "items": [], "fh": fh, "header": header.strip()}
    yield state
    fh.close()
