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

obs["MY_CFG"] = os.environ.get("MY_CFG")
obs["PYTHONHASHSEED_env"] = os.environ.get("PYTHONHASHSEED")
obs["hash_randomization_flag"] = sys.flags.hash_randomization
obs["hash_of_str"] = hash("sticky-invocation")
obs["set_order"] = list({"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"})
obs["int_max_str_digits"] = sys.get_int_max_str_digits()
try:
    obs["len_str_10_5000"] = len(str(10 ** 5000))
except ValueError as e:
    obs["len_str_10_5000"] = "ValueError"
done()
