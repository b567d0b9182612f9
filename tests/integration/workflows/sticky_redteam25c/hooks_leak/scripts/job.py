import json, os, re, sys
import stickyinvoc

state = stickyinvoc.state(snakemake)
I = int(snakemake.wildcards.i)
ROOT = os.path.dirname(os.path.abspath(snakemake.scriptdir))
obs = {}


def norm(x):
    s = str(x)
    s = s.replace(ROOT, "<ROOT>")
    s = re.sub(r"/tmp[a-z0-9_]{8}/", "/tmpXXXXXXXX/", s)
    return re.sub(r"tmp[a-z0-9_]{8}\.", "tmpXXXXXXXX.", s)


def done():
    with open(snakemake.output[0], "w") as f:
        json.dump(obs, f, indent=1, sort_keys=True, default=repr)
        f.write("\n")

import threading
obs["defaults_at_start"] = [sys.unraisablehook is sys.__unraisablehook__, sys.breakpointhook is sys.__breakpointhook__,
                            threading.excepthook is threading.__excepthook__, sys.excepthook is sys.__excepthook__]
if I == 1:
    sys.unraisablehook = lambda u: None
    sys.breakpointhook = lambda *a, **k: None
    threading.excepthook = lambda a: None
    sys.excepthook = lambda *a: None
done()
