"""Whether the template process can be forked safely, detected rather than guessed.

Fork mode forks every invocation from the process that built the templates. That is unsafe
when the template left something a child cannot inherit:

- **a GPU runtime initialised**: a CUDA (or ROCm, or another DRM compute) context lives in
  the driver, tied to the process that created it; a forked child that touches it fails or
  corrupts it. Seen as an open GPU device file (``/dev/nvidia*``, ``/dev/kfd``,
  ``/dev/dri/renderD*``) among the process's descriptors, or ``torch.cuda.is_initialized()``.
- **Python threads left running** by the template (a prefetcher, a server, a thread pool):
  a fork copies only the calling thread, and any lock another thread held stays locked in
  the child.
- **native threads left running**: an OpenMP pool (torch with several threads after a
  computation) is not fork-safe: the child hangs in its next parallel region.

Where any hazard is found the worker runs that template's invocations in direct mode (with
its after-invocation check, :mod:`._fingerprint`) and says why, once.

One kind of thread is stopped instead (:func:`stop_restartable_threads`): a library's idle
helper that the library starts again when it needs it, through its own API. tqdm's monitor
(``tqdm_monitor``: started by the first progress bar, such as transformers' "Loading weights"
bar, and never stopped since tqdm 4.66) would otherwise turn fork mode off for every template
that loads a model with its progress bar on.
"""

import os
import sys
import threading
from collections.abc import Iterable
from typing import Optional

_GPU_DEVICES = ("/dev/nvidia", "/dev/kfd", "/dev/dri/renderD", "/dev/accel")


def gpu_device_files(fd_dir: str = "/proc/self/fd") -> list[str]:
    """The GPU device files this process holds open (Linux; empty elsewhere)."""
    try:
        entries = os.listdir(fd_dir)
    except OSError:
        return []
    found = set()
    for entry in entries:
        try:
            target = os.readlink(os.path.join(fd_dir, entry))
        except OSError:
            continue
        if target.startswith(_GPU_DEVICES):
            found.add(target)
    return sorted(found)


def torch_cuda_initialized() -> bool:
    """Whether torch is loaded and has initialised CUDA."""
    torch = sys.modules.get("torch")
    cuda = getattr(torch, "cuda", None)
    try:
        return bool(cuda is not None and cuda.is_initialized())
    except Exception:  # noqa: BLE001 - a broken CUDA install: not initialised here
        return False


def fork_hazards(own_threads: Iterable[threading.Thread] = ()) -> list[str]:
    """Why forking this process would not give children a working copy (empty: safe).
    ``own_threads``: the worker's own threads (its heartbeat), which children do not need."""
    reasons: list[str] = []
    devices = gpu_device_files()
    if devices:
        reasons.append(f"a GPU runtime is initialised (open: {', '.join(devices[:3])})")
    elif torch_cuda_initialized():
        reasons.append("CUDA is initialised (torch.cuda.is_initialized())")
    own = set(own_threads) | {threading.current_thread()}
    running = [t.name for t in threading.enumerate() if t not in own and t.is_alive()]
    if running:
        reasons.append(f"the template left threads running ({', '.join(running[:3])})")
    native = native_threads()
    if native:
        reasons.append(
            f"the template left {len(native)} native thread(s) running "
            f"({', '.join(native[:3])}: an OpenMP, BLAS or Rust thread pool, such as "
            "torch.set_num_threads(N) followed by a computation, or a tokenizer's with "
            "TOKENIZERS_PARALLELISM=true: a forked child can hang in it; keep "
            "OMP_NUM_THREADS=1 and leave TOKENIZERS_PARALLELISM unset in the template)"
        )
    return reasons


def stop_restartable_threads() -> list[str]:
    """Stop the library helper threads that restart on demand (tqdm's monitor: a new progress
    bar starts one when its class has none); the names of those stopped."""
    stopped = []
    for thread in threading.enumerate():
        kind = type(thread)
        if kind.__module__ != "tqdm._monitor" or kind.__name__ != "TMonitor":
            continue
        owner = getattr(thread, "tqdm_cls", None)
        try:
            thread.exit()  # type: ignore[attr-defined]  # sets its event and joins it
        except Exception:  # noqa: BLE001 - an unknown tqdm: leave it, the hazard check sees it
            continue
        if owner is not None and owner.__dict__.get("monitor") is thread:
            owner.monitor = None  # the next bar starts a monitor of its own
        stopped.append(thread.name)
    return stopped


def native_threads(task_dir: str = "/proc/self/task") -> list[str]:
    """The names of this process's threads that Python does not know (Linux; none elsewhere)."""
    try:
        tasks = {int(t) for t in os.listdir(task_dir)}
    except OSError:
        return []
    # The calling thread by its id now: after a fork, Python 3.11 keeps the main thread's
    # ``native_id`` from the parent process (the worker is forked by its supervisor).
    known = {t.native_id for t in threading.enumerate() if t.native_id is not None}
    known.add(threading.get_native_id())
    names = []
    for tid in sorted(tasks - known):
        try:
            with open(os.path.join(task_dir, str(tid), "comm")) as f:
                names.append(f"{f.read().strip()}[{tid}]")
        except OSError:  # ended meanwhile
            continue
    return names


def describe(reasons: list[str]) -> Optional[str]:
    return "; ".join(reasons) if reasons else None
