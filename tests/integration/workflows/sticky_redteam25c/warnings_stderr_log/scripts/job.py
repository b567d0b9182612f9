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

import warnings
sys.stderr = open(snakemake.log[0], "w")
import oldapi
for _ in range(2):
    oldapi.old()
    oldapi.noisy()
warnings.warn("main user warning")
warnings.warn("main deprecation", DeprecationWarning)
warnings.warn("main pending", PendingDeprecationWarning)
warnings.warn("main resource", ResourceWarning)
obs["filters_head"] = [repr(f) for f in warnings.filters[:8]]
obs["warnoptions"] = sys.warnoptions
done()
