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

import mypkg2
obs["has_sub_before"] = hasattr(mypkg2, "sub")
obs["sub_in_sys_modules_before"] = "mypkg2.sub" in sys.modules
if not hasattr(mypkg2, "sub"):
    import mypkg2.sub
obs["imported_in_this_process"] = mypkg2.sub.PID_AT_IMPORT == os.getpid()
done()
