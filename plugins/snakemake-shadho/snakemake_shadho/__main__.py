"""``python -m snakemake_shadho``: see :mod:`snakemake_shadho._cli`."""

import sys

from ._cli import main

sys.exit(main())
