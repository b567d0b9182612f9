# Local module shadowing across folders: b/job.py imports its own utils.py, never this one's.
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import probe  # noqa: E402
import utils  # noqa: E402

sys.path.pop(0)
utils.COUNTER += 1
with open(snakemake.output[0], "w") as out:
    out.write(probe.report(globals()))
    out.write(
        f"utils: {utils.WHO} {utils.COUNTER} {os.path.basename(os.path.dirname(utils.__file__))}\n"
    )
