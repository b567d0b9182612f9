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

import shutil, subprocess
obs["which"] = norm(shutil.which("greet"))
obs["GREETING"] = os.environ.get("GREETING")
try:
    r = subprocess.run(["greet", str(I)], capture_output=True, text=True)
    obs["greet"] = r.stdout
except Exception as e:
    obs["greet_error"] = type(e).__name__
done()
