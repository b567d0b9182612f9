from __future__ import annotations
import json
import stickyinvoc

state = stickyinvoc.state(snakemake)


def f(x: SomeUndefined) -> int:
    return 1


with open(snakemake.output[0], "w") as fh:
    json.dump({"annotations": f.__annotations__}, fh)
