"""Run the snakemake CLI with the scheduling patch proposed upstream, in this process only.

``python bench/_patched_snakemake.py OUT_FILE SNAKEMAKE_ARGS...``: copies the installed
``snakemake`` package to a temporary folder, applies
``upstream/snakemake/scheduling-per-round.patch`` there, puts that copy first on ``sys.path``
and runs Snakemake as ``_peak_rss.py`` does (recording the main process's peak RSS in
OUT_FILE). Nothing installed is changed; the patch must apply cleanly or this stops. Child
processes (sticky workers) use the installed Snakemake: the patch is about the main process.
"""

import atexit
import importlib.util
import runpy
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
PATCH = HERE.parent / "upstream" / "snakemake" / "scheduling-per-round.patch"

spec = importlib.util.find_spec("snakemake")
assert spec is not None and spec.origin is not None and "snakemake" not in sys.modules
installed = Path(spec.origin).parent
overlay = Path(tempfile.mkdtemp(prefix="snakemake-patched-"))
atexit.register(shutil.rmtree, overlay, True)
shutil.copytree(installed, overlay / "snakemake", ignore=shutil.ignore_patterns("__pycache__"))
proc = subprocess.run(
    ["patch", "--silent", "-p2", "-d", str(overlay), "-i", str(PATCH)],
    capture_output=True,
    text=True,
)
if proc.returncode != 0:
    sys.exit(f"{PATCH.name} does not apply to {installed}: {proc.stdout}{proc.stderr}")
sys.path.insert(0, str(overlay))
import snakemake  # noqa: E402

assert Path(snakemake.__file__).parent == overlay / "snakemake", snakemake.__file__
runpy.run_path(str(HERE / "_peak_rss.py"), run_name="__main__")
