"""A sticky worker in a test's process (its messages dropped) and fork-mode invocations on it:
real forks, no Snakemake, for tests of what a forked job sees. Such a test's body runs in a
fresh interpreter (``in_fresh_process``): a fork-mode worker refuses to fork a process with
threads running, and pytest's process holds those earlier tests left (pyzmq's, sticky
wake-ups), so in the test's own process it would fall back to direct mode."""

import json
import subprocess
import sys
import types
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import stickyinvoc._access as access
from snakemake_executor_plugin_sticky._protocol import InvocationDone, Invoke
from snakemake_executor_plugin_sticky.worker import Worker

ROOT = Path(__file__).resolve().parents[3]
_RUNNER = """
import importlib.util, json, sys
import pytest
sys.path.insert(0, sys.argv[1])
spec = importlib.util.spec_from_file_location("fresh_test_module", sys.argv[2])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
try:
    value = getattr(module, sys.argv[3])(**json.loads(sys.argv[4]))
    print()
    print("fresh-process-result " + json.dumps(value))
except pytest.skip.Exception as skip:
    print(skip.msg, file=sys.stderr)
    sys.exit(75)
"""


def in_fresh_process(body: Callable[..., Any], **kwargs: object) -> Any:
    """Run ``body(**kwargs)``, a module-level function of a test module, in a fresh interpreter
    (keyword arguments and the value it returns as JSON: pass paths as strings); its failure
    fails the calling test, its skip skips it; its value is returned."""
    file = sys.modules[body.__module__].__file__
    argv = [sys.executable, "-c", _RUNNER, str(ROOT), str(file), body.__name__]
    proc = subprocess.run(
        [*argv, json.dumps(kwargs)], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    if proc.returncode == 75:
        pytest.skip(proc.stderr.strip())
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-6000:]
    marker = "fresh-process-result "
    last = [line for line in proc.stdout.splitlines() if line.startswith(marker)][-1]
    return json.loads(last[len(marker) :])


class _Conn:
    def send(self, message: object) -> None:
        pass


def in_process_worker() -> Worker:
    worker = Worker(_Conn(), "test")  # type: ignore[arg-type]
    access._bind_worker(worker.holder.lookup)
    return worker


def invoke_forked(
    worker: Worker, number: int, template: str, templates: Path, source: str, output: Path
) -> InvocationDone:
    """Run ``source`` as invocation ``number`` of ``template`` (defined in ``templates``, whose
    folder is the working directory), writing ``output``; it must have run forked."""
    folder = templates.parent
    smk = types.SimpleNamespace(
        rule="r", resources={"sticky": template}, output=[str(output)], log=[]
    )
    invoke = Invoke(
        number, template, str(templates), str(folder / "r.py"), source, str(folder), smk,
        isolation="fork", workdir=str(folder), searchpaths=[],
    )  # fmt: skip
    done = worker.run(invoke)
    assert worker.mode(invoke) == "fork", worker.hazards  # no fallback to direct mode
    return done
