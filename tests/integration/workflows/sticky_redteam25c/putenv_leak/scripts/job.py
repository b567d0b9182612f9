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

import subprocess
obs["child_LEAKY"] = subprocess.run("echo ${LEAKY:-unset}", shell=True, capture_output=True, text=True).stdout
obs["child_VISIBLE"] = subprocess.run("echo ${VISIBLE:-unset}", shell=True, capture_output=True, text=True).stdout
obs["environ_VISIBLE"] = os.environ.get("VISIBLE", "unset")
if I == 1:
    os.putenv("LEAKY", "1")
    os.environ["VISIBLE"] = "1"
done()
