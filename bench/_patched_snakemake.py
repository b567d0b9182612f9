"""Run the snakemake CLI with the job scheduler patch proposed upstream, in this process only.

``python bench/_patched_snakemake.py OUT_FILE SNAKEMAKE_ARGS...``: applies
``upstream/snakemake/job_scheduler-per-round.patch`` to a temporary copy of the installed
``snakemake/scheduling/job_scheduler.py``, loads that copy as the module, then runs Snakemake
as ``_peak_rss.py`` does (recording the main process's peak RSS in OUT_FILE). Nothing installed
is changed; the patch must apply cleanly or this stops.
"""

import importlib.util
import runpy
import subprocess
import sys
import tempfile
from pathlib import Path

PATCH = (
    Path(__file__).resolve().parent.parent
    / "upstream"
    / "snakemake"
    / ("job_scheduler-per-round.patch")
)

spec = importlib.util.find_spec("snakemake.scheduling.job_scheduler")
assert spec is not None and spec.origin is not None
patched = Path(tempfile.mkdtemp(prefix="snakemake-patched-")) / "job_scheduler.py"
proc = subprocess.run(
    ["patch", "--silent", "-o", str(patched), spec.origin, str(PATCH)],
    capture_output=True,
    text=True,
)
if proc.returncode != 0:
    sys.exit(f"{PATCH.name} does not apply to {spec.origin}: {proc.stdout}{proc.stderr}")
module_spec = importlib.util.spec_from_file_location(spec.name, patched)
assert module_spec is not None and module_spec.loader is not None
module = importlib.util.module_from_spec(module_spec)
sys.modules[spec.name] = module
module_spec.loader.exec_module(module)

runpy.run_path(str(Path(__file__).resolve().parent / "_peak_rss.py"), run_name="__main__")
