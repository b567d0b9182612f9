# How a script ends: params.value says how. Under --executor local each of these is the exit of
# a fresh process; under sticky it must fail (or succeed) that one job the same way, once.
import sys

import probe

with open(snakemake.output[0], "w") as out:
    out.write(probe.report(globals()))
how = snakemake.params.value
if how == "KeyboardInterrupt":
    raise KeyboardInterrupt
if how == "exit-3":
    sys.exit(3)
if how == "exit-message":
    sys.exit("bad input: the script gives up")
if how == "raise":
    raise ValueError("a bad row")
if how == "exit-0":
    sys.exit(0)
