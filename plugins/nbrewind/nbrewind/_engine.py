"""Entry point of the ``nbrewind`` papermill engine, safe against papermill's import cycle.

Papermill loads ``papermill.engine`` entry points while ``papermill.engines`` is still being
imported. If importing the engine module itself imported papermill first, whichever of the two
was imported first would meet the other half-initialised. So this module imports nothing from
papermill: ``NBRewindEngine`` is resolved on first access (PEP 562), after papermill's own
import has finished or while it is at its entry-point step (where ``NBClientEngine`` exists).
"""

from typing import Any, Optional


class NBRewindError(Exception):
    """A usage error of the nbrewind engine, with what to do about it."""


def kernel_mode(kernel_name: Optional[str]) -> str:
    """``audit`` or ``repeat``, from the kernelspec's ``NBREWIND_MODE``."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        spec = KernelSpecManager().get_kernel_spec(kernel_name or "")
    except NoSuchKernel:
        spec = None
    mode = spec.env.get("NBREWIND_MODE") if spec is not None else None
    if mode not in ("audit", "repeat"):
        found = "not installed" if spec is None else "not an nbrewind kernel"
        raise NBRewindError(
            f"the nbrewind engine runs the nbrewind-audit or nbrewind-repeat kernel; kernel "
            f"{kernel_name!r} is {found}. Pass -k nbrewind-audit or -k nbrewind-repeat (if "
            "they are missing from `jupyter kernelspec list`, run `nbrewind install-kernels`)"
        )
    return mode


def __getattr__(name: str) -> Any:
    if name in ("NBRewindEngine", "RewindClient"):
        import papermill  # noqa: F401 - completes papermill's import (it loads this entry point)

        from . import _papermill_engine

        return getattr(_papermill_engine, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
