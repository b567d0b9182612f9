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

from snakemake.shell import shell
try:
    r = shell('if [ -n "$BASH_VERSION" ]; then echo bash; else echo notbash; fi; false | true; echo after-pipe', read=True)
    obs["shell_out"] = r
except Exception as e:
    obs["shell_error"] = type(e).__name__
obs["executable"] = shell.get_executable()
obs["prefix"] = shell._process_prefix
obs["suffix"] = shell._process_suffix
done()
