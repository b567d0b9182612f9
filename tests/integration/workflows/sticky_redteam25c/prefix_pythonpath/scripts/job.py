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

try:
    import mylib
    obs["mylib"] = [mylib.VALUE, norm(mylib.__file__)]
except ImportError as e:
    obs["mylib"] = "ImportError"
obs["PYTHONPATH"] = norm(os.environ.get("PYTHONPATH"))
libs = [k for k, p in enumerate(sys.path) if p.rstrip("/").endswith("/lib") and ROOT in p]
site = [k for k, p in enumerate(sys.path) if p.endswith("site-packages")]
obs["lib_before_site_packages"] = bool(libs) and bool(site) and libs[0] < site[0]
done()
