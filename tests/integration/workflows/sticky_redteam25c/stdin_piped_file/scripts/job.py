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

import select, stat
st = os.fstat(0).st_mode
obs["fd0_kind"] = ("chr" if stat.S_ISCHR(st) else "fifo" if stat.S_ISFIFO(st) else "reg" if stat.S_ISREG(st)
                   else "sock" if stat.S_ISSOCK(st) else "other")
obs["isatty"] = sys.stdin.isatty()
obs["stdin_name"] = sys.stdin.name
r, _, _ = select.select([sys.stdin], [], [], 5)
obs["ready"] = bool(r)
obs["data"] = sys.stdin.read() if r else "<would block>"
try:
    obs["input()"] = input()
except EOFError:
    obs["input()"] = "EOFError"
done()
