import json, os, subprocess, sys
import stickyinvoc

obs = {}


def ntasks():
    return len(os.listdir("/proc/self/task"))


def c_env():
    # the C-level environment a subprocess inherits
    return subprocess.run(["sh", "-c", 'echo "${TOKENIZERS_PARALLELISM-<unset>}"'],
                          capture_output=True, text=True).stdout.strip()


I = int(snakemake.wildcards.i)
obs["env_before_state"] = os.environ.get("TOKENIZERS_PARALLELISM", "<unset>")
state = stickyinvoc.state(snakemake)
tok = state["tok"]
obs["env_after_state"] = os.environ.get("TOKENIZERS_PARALLELISM", "<unset>")
obs["c_env_after_state"] = c_env()
texts = [f"claim number {I} is about tokenizers", "short", "a somewhat longer sentence with more words in it"]
enc = tok(texts, padding=True, truncation=True, max_length=12)
obs["input_ids"] = enc["input_ids"]
obs["attention_mask"] = enc["attention_mask"]
obs["decoded"] = tok.batch_decode(enc["input_ids"], skip_special_tokens=True)
obs["env_end"] = os.environ.get("TOKENIZERS_PARALLELISM", "<unset>")
obs["c_env_end"] = c_env()
if snakemake.params.mode == "fork":
    # canary: a class attribute carries over only if invocations share a process
    import json as _j
    obs["canary"] = getattr(_j.JSONDecoder, "_rt_canary", 0)
    _j.JSONDecoder._rt_canary = obs["canary"] + 1
with open(snakemake.output[0], "w") as f:
    for k in sorted(obs):
        f.write(f"{k}: {json.dumps(obs[k])}\n")
with open(snakemake.log[0], "w") as f:
    f.write("ok\n")
