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

obs["cwd"] = norm(os.getcwd())
obs["PWD"] = norm(os.environ.get("PWD"))
obs["marker_exists"] = os.path.exists("marker.txt")
obs["scriptdir"] = norm(snakemake.scriptdir)
obs["__file__"] = norm(__file__)
obs["sys_path_in_root"] = [norm(p) for p in sys.path if ROOT in p]
try:
    import helper
    obs["helper"] = helper.WHERE
except ImportError:
    obs["helper"] = "ImportError"
done()
