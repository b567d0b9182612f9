"""$SHADHO_HW_CLASS seen at import, in the template and in the trial must agree, and the
trial's `threads` must be the cpus of the class running it (fast: 2, slow: 1), also for a
trial a worker takes from another class's queue. Trial length varies with x so the
classes' queues drain unevenly."""
import os
import time

IMPORT_CLS = os.environ.get("SHADHO_HW_CLASS")
CPUS = {"fast": 2, "slow": 1}


def evaluate(params, state=None, threads=1):
    x = float(params["x"])
    cls = os.environ.get("SHADHO_HW_CLASS")
    seen = {
        "has_class": cls in CPUS,
        "import_matches": IMPORT_CLS == cls,
        "template_matches": state is not None and state.get("cls") == cls,
        "threads_match": CPUS.get(cls) == threads,
    }
    os.environ["SHADHO_HW_CLASS"] = "bogus"
    time.sleep(0.05 + 0.25 * x)
    out = {"loss": (x - 0.3) ** 2}
    out.update(seen)
    return out
