import json, os, sys
import stickyinvoc

TV = ["OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
      "GOTO_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS"]
obs = {}


def envtv():
    return {k: os.environ.get(k, "<unset>") for k in TV}


def pools():
    import threadpoolctl
    return sorted(f"{d['internal_api']}:{os.path.basename(d['filepath'])}:{d['num_threads']}"
                  for d in threadpoolctl.threadpool_info())


def torchinfo():
    import torch
    return {"num_threads": torch.get_num_threads(),
            "interop": torch.get_num_interop_threads(),
            "parallel_info": torch.__config__.parallel_info().splitlines()}


def done():
    with open(snakemake.output[0], "w") as f:
        json.dump(obs, f, indent=1, sort_keys=True, default=repr)
        f.write("\n")


I = int(snakemake.wildcards.i)
obs["snakemake_threads"] = snakemake.threads
import ctypes, subprocess
state = stickyinvoc.state(snakemake)
libc = ctypes.CDLL(None)
libc.getenv.restype = ctypes.c_char_p
obs["os_environ"] = envtv()
obs["libc_getenv"] = {k: (libc.getenv(k.encode()) or b"<unset>").decode() for k in TV}
code = ("import os, json, numpy, threadpoolctl; TV = %r; "
        "print(json.dumps({'env': {k: os.environ.get(k, '<unset>') for k in TV}, "
        "'pools': sorted(d['num_threads'] for d in threadpoolctl.threadpool_info())}, sort_keys=True))" % TV)
obs["child_python"] = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
obs["child_sh"] = sorted(l for l in subprocess.run(["sh", "-c", "env"], capture_output=True, text=True).stdout.splitlines() if l.split("=")[0] in TV)
done()
