"""``python -m shadho``: see :mod:`shadho._cli`."""

import sys

from ._cli import main

sys.exit(main())
