import os
import stickyinvoc

I = int(snakemake.wildcards.i)
tok = stickyinvoc.state(snakemake)["tok"]
import torch
from torch.utils.data import DataLoader

texts = [f"claim {I}.{k}: " + "word " * (k % 5) for k in range(12)]


def collate(batch):
    enc = tok(batch, padding=True, return_tensors="pt")
    enc["threads"] = torch.tensor(len(os.listdir("/proc/self/task")))
    enc["tp_env"] = os.environ.get("TOKENIZERS_PARALLELISM", "<unset>")
    return enc


loader = DataLoader(texts, batch_size=4, num_workers=2, collate_fn=collate)  # fork on Linux
with open(snakemake.output[0], "w") as f:
    for b in loader:
        f.write(f"{b['input_ids'].tolist()} mask_sum={int(b['attention_mask'].sum())} "
                f"worker_threads={int(b['threads'])} worker_env={b['tp_env']}\n")
with open(snakemake.log[0], "w") as f:
    f.write("ok\n")
