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

sm = snakemake
obs["input"] = [list(sm.input), list(sm.input.keys())]
obs["output"] = [list(sm.output), list(sm.output.keys())]
obs["params"] = [[k, type(v).__name__, repr(v)] for k, v in sm.params.items()]
obs["params_positional"] = [repr(v) for v in sm.params]
obs["wildcards"] = list(sm.wildcards.items())
obs["threads"] = sm.threads
obs["resources"] = sorted([k, repr(v)] for k, v in sm.resources.items())
obs["log"] = [list(sm.log), list(sm.log.keys())]
obs["rule"] = sm.rule
obs["bench_iteration"] = sm.bench_iteration
obs["scriptdir"] = norm(sm.scriptdir)
obs["types"] = [type(sm).__module__ + "." + type(sm).__name__, type(sm.input).__name__, type(sm.params).__name__]
obs["env_threads"] = {k: os.environ.get(k) for k in ["OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                                                        "GOTO_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"]}
with open(sm.log.extra, "w") as f:
    f.write("extra log\n")
done()
