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

def probe(n):
    try:
        return probe(n + 1)
    except RecursionError:
        return n
obs["max_depth"] = probe(1)

class Node:
    def __init__(self, nxt):
        self.nxt = nxt
head = None
for _ in range(985):
    head = Node(head)
def length(node):
    return 0 if node is None else 1 + length(node.nxt)
try:
    obs["dfs_985"] = length(head)
except RecursionError:
    obs["dfs_985"] = "RecursionError"
done()
