"""Worker-side cost of one no-op invocation in each isolation mode, in-process.

Run by ``invocation_overhead.py`` in a fresh interpreter: builds a real :class:`Worker` (with a
recording connection instead of a socket), runs N no-op invocations through ``Worker.run`` in
direct mode and in fork mode, and times a bare ``fork`` + ``_exit`` + ``waitpid`` of the same
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
    for mode in ("direct", "fork"):

        def invoke(i: int, mode: str = mode) -> Invoke:
            return Invoke(
                i, "m", str(templates), str(folder / "noop.py"), source, str(folder), smk,
                isolation=mode, workdir=str(folder), searchpaths=[],
            )  # fmt: skip

        assert worker.run(invoke(0)).ok
        start = time.perf_counter()
        for i in range(n):
            assert worker.run(invoke(i + 1)).ok
        result[f"{mode}_ms"] = (time.perf_counter() - start) / n * 1000
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
