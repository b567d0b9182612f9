"""A user who runs the search from the folder holding data.txt reads it by a relative path,
at import and in each trial; then the trial changes directory (as tools that chdir into
a scratch folder do) and does not go back."""
import os
import tempfile
import time

with open("data.txt") as f:
    IMPORT_DATA = f.read().strip()


def evaluate(params, threads=1):
    x = float(params["x"])
    try:
        with open("data.txt") as f:
            seen = f.read().strip()
    except OSError as e:
        seen = "missing: %s in %s" % (type(e).__name__, os.getcwd())
    os.chdir(tempfile.gettempdir())
    time.sleep(0.1)
    return {"loss": (x - 0.3) ** 2, "seen": seen, "import_seen": IMPORT_DATA}
