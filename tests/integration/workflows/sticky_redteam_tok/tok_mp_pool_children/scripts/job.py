import json, multiprocessing as mp, os
import stickyinvoc

I = int(snakemake.wildcards.i)
tok = stickyinvoc.state(snakemake)["tok"]


def work(chunk):
    enc = tok(chunk, padding=True)  # a batch encode in a forked pool process
    return enc["input_ids"], len(os.listdir("/proc/self/task"))


chunks = [[f"claim {I}.{k} one", f"the longer claim {I}.{k} number two"] for k in range(4)]
with mp.get_context("fork").Pool(2) as pool:
    res = pool.map(work, chunks)
with open(snakemake.output[0], "w") as f:
    for ids, nthreads in res:
        f.write(f"{json.dumps(ids)} threads_in_pool_process_after_encode={nthreads}\n")
with open(snakemake.log[0], "w") as f:
    f.write("ok\n")
