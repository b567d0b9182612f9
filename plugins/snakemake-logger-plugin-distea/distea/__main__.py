"""``python -m distea``: see :mod:`distea._cli`."""

import sys

from ._cli import main

sys.exit(main())
