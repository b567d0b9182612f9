"""Installing the two kernelspecs where ``jupyter kernelspec list`` finds them.

A wheel install (``pip install``) already puts them in ``<prefix>/share/jupyter/kernels`` (they
are the distribution's data files). ``nbrewind install-kernels`` is for installs that do not
(some editable installs, a different Jupyter than the package's environment).
"""

from importlib import resources
from pathlib import Path
from typing import Optional

KERNEL_NAMES = ("nbrewind-audit", "nbrewind-repeat")


def kernelspec_dirs() -> dict[str, Path]:
    root = resources.files("nbrewind") / "kernelspecs"
    return {name: Path(str(root / name)) for name in KERNEL_NAMES}


def install_kernels(user: bool = False, prefix: Optional[str] = None) -> list[str]:
    """Install both kernelspecs (``--sys-prefix`` by default); return where they went."""
    import sys

    from jupyter_client.kernelspec import KernelSpecManager

    manager = KernelSpecManager()
    if not user and prefix is None:
        prefix = sys.prefix
    return [
        manager.install_kernel_spec(str(path), kernel_name=name, user=user, prefix=prefix)
        for name, path in kernelspec_dirs().items()
    ]
