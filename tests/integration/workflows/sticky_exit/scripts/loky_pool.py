# joblib's default backend (loky), as scikit-learn's n_jobs=2 uses it: its reusable executor
# is left running, as every such script leaves it. A fresh interpreter's exit tells the
# executor's manager thread that the interpreter exits (threading._register_atexit), and the
# job ends; a sticky job that did not hung for ever joining that thread.
from joblib import Parallel, delayed


def square(v):
    return v * v


values = Parallel(n_jobs=2)(delayed(square)(i) for i in range(6))
with open(snakemake.output[0], "w") as f:
    f.write(f"{values}\n")
