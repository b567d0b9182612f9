"""Run the snakemake CLI in this process and record its peak RSS (KiB) at exit.

``python bench/_peak_rss.py OUT_FILE SNAKEMAKE_ARGS...``: the figure is the main Snakemake
process's own high-water mark (worker processes are not included).
"""

import atexit
import resource
import sys
from pathlib import Path

out = Path(sys.argv[1])
sys.argv = ["snakemake", *sys.argv[2:]]
atexit.register(lambda: out.write_text(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)))

from snakemake.cli import main  # noqa: E402

main()
