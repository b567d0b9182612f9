"""Sticky templates of the claim-verification workflow.

``minilm`` is the expensive state: importing torch and transformers and loading the MiniLM
encoder from disk (onto the GPU when there is one). Under ``--executor sticky`` each worker
builds it once; under ``--executor local`` every job builds it again.
"""

import sys
from pathlib import Path

from stickyinvoc import template

sys.path.insert(0, str(Path(__file__).parent / "scripts"))


# resources: where the state is built when workers are Slurm pilots (--sticky-backend slurm,
# profiles/slurm-sticky); ignored by local workers. A GPU cluster would ask for
# "slurm_partition": "gpu", "gpu": 1.
# isolation="direct": one claim's inference takes about 13 ms on a CPU, and forking this
# 450 MB process for every invocation costs more than that (docs/sticky.md, "Choosing a
# mode"); each invocation runs in the worker, which is checked after it and retired if the
# job changed it. On a GPU, direct mode is what a CUDA template gets anyway.
@template(
    "minilm",
    resources={"slurm_partition": "cpu", "cpus_per_task": 1, "mem_mb": 4000, "runtime": 60},
    isolation="direct",
)
def minilm():
    import claimcheck

    encoder = claimcheck.load_encoder()
    # One inference while building: what torch sets up on first use (its matrix kernels, their
    # buffers) is then set up once here, not again in every invocation (in fork mode, every
    # forked child would set it up again).
    encoder.embed(["warm up"])
    yield encoder
    if encoder.device == "cuda":
        import torch

        del encoder.model
        torch.cuda.empty_cache()
