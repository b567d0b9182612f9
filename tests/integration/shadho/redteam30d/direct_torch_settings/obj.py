"""Direct mode (thread at import) with torch. Settings a training loop commonly flips
globally: grad mode (thread-local in torch), anomaly detection, deterministic
algorithms, print precision (a mutated options object), default dtype, and flush-to-zero
of denormals (a CPU flag of the calling thread, which also changes numpy results)."""
import numpy as np
import torch
# A background thread started at import (a metrics/prefetch thread): forking this
# process is unsafe, so per the docs the workers run trials in direct mode.
import threading as _threading
import time as _time


def _keepalive():
    while True:
        _time.sleep(3600)


_threading.Thread(target=_keepalive, name="rt-keepalive", daemon=True).start()


def snapshot():
    return {
        "grad_enabled": torch.is_grad_enabled(),
        "anomaly": torch.is_anomaly_enabled(),
        "deterministic": torch.are_deterministic_algorithms_enabled(),
        "print_precision": torch._tensor_str.PRINT_OPTS.precision,
        "default_dtype": str(torch.get_default_dtype()),
        "torch_denormal_kept": float((torch.tensor([1e-310], dtype=torch.float64) * 1.0).item()) != 0.0,
        "numpy_denormal_kept": float((np.array([1e-310]) * 1.0)[0]) != 0.0,
    }


IMPORT_SNAPSHOT = snapshot()


def evaluate(params, threads=1):
    x = float(params["x"])
    now = snapshot()
    diff = sorted(k for k in now if now[k] != IMPORT_SNAPSHOT[k])
    torch.set_grad_enabled(False)  # "inference only" evaluation, never switched back
    torch.autograd.set_detect_anomaly(True)
    torch.use_deterministic_algorithms(True)
    torch.set_printoptions(precision=2)
    torch.set_default_dtype(torch.float64)
    torch.set_flush_denormal(True)
    _time.sleep(0.1)
    return {"loss": (x - 0.3) ** 2, "diff": diff}
