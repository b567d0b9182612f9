"""Kernel launcher: ``python -m nbrewind.kernel -f CONNECTION_FILE`` (what the kernelspecs run).

The mode (``audit`` or ``repeat``) comes from ``NBREWIND_MODE`` in the kernelspec's env.
"""

from ._kernel import NBRewindKernel, main

__all__ = ["NBRewindKernel", "main"]

if __name__ == "__main__":
    main()
