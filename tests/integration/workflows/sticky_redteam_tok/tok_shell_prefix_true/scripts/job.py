import json, os, subprocess
import stickyinvoc

obs = {}
I = int(snakemake.wildcards.i)
obs["env_before_state"] = os.environ.get("TOKENIZERS_PARALLELISM", "<unset>")
tok = stickyinvoc.state(snakemake)["tok"]
obs["env_after_state"] = os.environ.get("TOKENIZERS_PARALLELISM", "<unset>")
obs["subprocess_env"] = subprocess.run(["sh", "-c", 'echo "${TOKENIZERS_PARALLELISM-<unset>}"'],
                                       capture_output=True, text=True).stdout.strip()
t0 = len(os.listdir("/proc/self/task"))
enc = tok([f"claim {I}", "a second, longer claim"], padding=True)
obs["threads_started_by_batch_encode"] = len(os.listdir("/proc/self/task")) - t0
obs["input_ids"] = enc["input_ids"]
if snakemake.params.mode == "fork":
    # canary: a class attribute carries over only if invocations share a process (direct mode)
    import json as _j
    obs["canary_shared_process"] = getattr(_j.JSONDecoder, "_rt_canary", 0)
    _j.JSONDecoder._rt_canary = obs["canary_shared_process"] + 1
with open(snakemake.output[0], "w") as f:
    for k in sorted(obs):
        f.write(f"{k}: {json.dumps(obs[k])}\n")
with open(snakemake.log[0], "w") as f:
    f.write("ok\n")
