"""A sticky worker in the test's own process (its messages dropped) and fork-mode invocations
on it: real forks, no Snakemake, for tests of what a forked job sees."""

import types
from pathlib import Path

import stickyinvoc._access as access
from snakemake_executor_plugin_sticky._protocol import InvocationDone, Invoke
from snakemake_executor_plugin_sticky.worker import Worker


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
