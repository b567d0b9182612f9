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

old = os.umask(0)
os.umask(old)
obs["umask"] = oct(old)
p = f"out/side_{I}.dat"
with open(p, "w") as f:
    f.write("x")
obs["side_file_mode"] = oct(os.stat(p).st_mode & 0o777)
os.makedirs(f"out/dir_{I}", exist_ok=True)
obs["side_dir_mode"] = oct(os.stat(f"out/dir_{I}").st_mode & 0o777)
done()
