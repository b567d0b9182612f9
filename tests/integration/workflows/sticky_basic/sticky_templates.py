"""Templates of the test workflow: they record every build and teardown as files."""

import os
import time
from pathlib import Path

from stickyinvoc import template


def _record(kind: str) -> None:
    folder = Path(kind)
    folder.mkdir(exist_ok=True)
    (folder / f"{os.getpid()}-{time.monotonic_ns()}").write_text(str(os.getpid()))


@template("counter")
def counter():
    if os.environ.get("TEST_TEMPLATE_FAILS"):
        raise RuntimeError("the counter template cannot start: TEST_TEMPLATE_FAILS is set")
    time.sleep(float(os.environ.get("TEST_TEMPLATE_SECONDS", "0.2")))  # a slow build
    slow_first = os.environ.get("TEST_TEMPLATE_SLOW_FIRST")  # the first build hangs (killed)
    if slow_first and not os.path.exists(slow_first):
        Path(slow_first).write_text(str(os.getpid()))
        time.sleep(120)
    _record("builds")
    yield {"pid": os.getpid(), "factor": 10}
    _record("teardowns")


@template
def other():
    return {"pid": os.getpid(), "factor": 100}
