import os
import time
from pathlib import Path

import stickyinvoc

state = stickyinvoc.state(snakemake)
i = int(snakemake.wildcards.i)


def listed(key: str) -> bool:
    """Whether this invocation is named in config[key] (--config gives strings)."""
    return i in [int(x) for x in snakemake.config.get(key, [])]


def first_attempt(kind: str) -> bool:
    """True the first time this invocation gets here (a marker file remembers)."""
    marker = Path(f"markers/{kind}-{i}")
    marker.parent.mkdir(exist_ok=True)
    if marker.exists():
        return False
    marker.write_text("")
    return True


if listed("hang_on") and first_attempt("hang"):
    Path(snakemake.output[0]).write_text("PARTIAL")
    Path(f"markers/pid-{i}").write_text(str(os.getpid()))
    time.sleep(120)
if listed("fail_on"):
    raise ValueError(f"invocation {i} fails on purpose")
if listed("flaky_on") and first_attempt("flaky"):
    raise RuntimeError(f"invocation {i} fails on its first attempt")
if listed("sleep_on"):
    time.sleep(float(snakemake.config.get("sleep_seconds", 60)))
with open(snakemake.log[0], "w") as log:
    log.write(f"invocation {i}\n")
if not listed("missing_on"):
    value = i * snakemake.params.scale * state["factor"]
    Path(snakemake.output[0]).write_text(f"{i} {value}\n")
