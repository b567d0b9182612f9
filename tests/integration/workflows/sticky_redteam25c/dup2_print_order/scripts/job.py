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
fd = os.open(snakemake.log[0], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
os.dup2(fd, 1)
os.dup2(fd, 2)
os.close(fd)
print("py-out-1")
print("py-err-1", file=sys.stderr)
subprocess.run(["echo", "child-1"])
os.system("echo child-2")
print("py-out-2")
print("caf\u00e9 \u2713")
obs["stdout_line_buffering"] = sys.stdout.line_buffering
obs["stdout_write_through"] = sys.stdout.write_through
obs["stderr_line_buffering"] = sys.stderr.line_buffering
done()
