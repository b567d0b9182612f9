"""Worker-side cost of one no-op invocation in each isolation mode, in-process.

Run by ``invocation_overhead.py`` in a fresh interpreter: builds a real :class:`Worker` (with a
recording connection instead of a socket), runs N no-op invocations through ``Worker.run`` in
direct mode and in fork mode (with the next child forked ahead, off the invocation's path,
and on demand), and times a bare ``fork`` + ``_exit`` + ``waitpid`` of the same
process (the floor of fork mode). With ``--heavy``, torch and transformers are imported first,
as a model template would: fork's cost grows with the warm process. Prints one JSON object.

    python bench/_invocation_cost.py N [--heavy]
"""

import json
import os
import resource
import sys
import tempfile
import time
import types
from pathlib import Path

import stickyinvoc._access as access
from snakemake_executor_plugin_sticky._protocol import Invoke
from snakemake_executor_plugin_sticky.worker import Worker


class _Conn:
    def send(self, message: object) -> None:
        pass


def main() -> None:
    n = int(sys.argv[1])
    heavy = "--heavy" in sys.argv
    worker = Worker(_Conn(), "bench")  # type: ignore[arg-type]
    access._bind_worker(worker.holder.lookup)
    if heavy:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    folder = Path(tempfile.mkdtemp(prefix="invocation-cost-"))
    templates = folder / "sticky_templates.py"
    templates.write_text(
        "from stickyinvoc import template\n@template('m')\ndef m():\n    return 1\n"
    )
    smk = types.SimpleNamespace(
        rule="noop", resources={"sticky": "m"}, output=[str(folder / "out")], log=[]
    )
    source = 'open(snakemake.output[0], "w").close()\n'
    result: dict[str, float] = {}
    # fork: the next child forked ahead (Worker.serve calls idle() after each reply), so the
    # critical path is the hand-over and the child's run; fork-on-demand: no child ahead.
    for mode, ahead in (("direct", False), ("fork", True), ("fork_on_demand", False)):
        isolation = "direct" if mode == "direct" else "fork"

        def invoke(i: int, isolation: str = isolation) -> Invoke:
            return Invoke(
                i, "m", str(templates), str(folder / "noop.py"), source, str(folder), smk,
                isolation=isolation, workdir=str(folder), searchpaths=[],
            )  # fmt: skip

        assert worker.run(invoke(0)).ok
        assert worker.mode(invoke(0)) == isolation, worker.hazards  # no fallback measured
        path = idle = 0.0
        for i in range(n):
            start = time.perf_counter()
            assert worker.run(invoke(i + 1)).ok
            path += time.perf_counter() - start
            start = time.perf_counter()
            worker.isolation.idle(ahead)
            idle += time.perf_counter() - start
        result[f"{mode}_ms"] = path / n * 1000
        result[f"{mode}_between_ms"] = idle / n * 1000
    start = time.perf_counter()
    for _ in range(n):
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
    result["bare_fork_ms"] = (time.perf_counter() - start) / n * 1000
    result["worker_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result["modules_loaded"] = len(sys.modules)
    print(json.dumps({k: round(v, 3) for k, v in result.items()}))


if __name__ == "__main__":
    main()
