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
@template(
    "minilm",
    resources={"slurm_partition": "cpu", "cpus_per_task": 1, "mem_mb": 4000, "runtime": 60},
)
def minilm():
    import claimcheck

    encoder = claimcheck.load_encoder()
    # One inference while building: what torch sets up on first use (its matrix kernels, their
    # buffers) is then set up once here, not again in every forked invocation.
    encoder.embed(["warm up"])
    yield encoder
    if encoder.device == "cuda":
        import torch

        del encoder.model
        torch.cuda.empty_cache()
