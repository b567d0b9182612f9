"""What reporting one finished invocation costs the main process, in-process (issue 17,
part 2: could the executor batch its status reports?).

Times, best of 5 x N calls, microseconds per job:

- ``JobScheduler._proceed``: what ``report_job_success`` calls (``finish_callback``): take
  the scheduler's lock, queue the job for the next round, release the round semaphore;
  Snakemake's own function on a stand-in holding just those;
- the sticky executor's ``Executor._on_done`` for a job without benchmark or warnings,
  through the real ``report_job_success`` into that ``_proceed``;
- one ``MetricsLog.write`` of an ``invocation`` record (JSON, write, flush: written by the
  manager's I/O thread, once per invocation).

Prints one JSON object. ``python bench/_status_report_cost.py [N]``
"""

import json
import sys
import tempfile
import threading
import timeit
import types
from pathlib import Path

from snakemake.scheduling.job_scheduler import JobScheduler
from snakemake_interface_executor_plugins.executors.base import SubmittedJobInfo

from snakemake_executor_plugin_sticky._metrics import MetricsLog
from snakemake_executor_plugin_sticky.executor import Executor

N = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000

scheduler = types.SimpleNamespace(
    _lock=threading.Lock(),
    _tofinish=[],
    _toerror=[],
    dryrun=False,
    running=set(),
    _open_jobs=threading.Semaphore(0),
)
scheduler.finish_callback = types.MethodType(JobScheduler._proceed, scheduler)
job = types.SimpleNamespace(benchmark=None)
executor = object.__new__(Executor)
executor.workflow = types.SimpleNamespace(scheduler=scheduler)
executor._ckpt = None


def proceed() -> None:
    for _ in range(N):
        scheduler.finish_callback(job)
    scheduler._tofinish.clear()


def table() -> None:
    executor._jobs = {i: SubmittedJobInfo(job=job, external_jobid="x") for i in range(N)}


def on_done() -> None:
    table()
    for i in range(N):
        executor._on_done(i, True, None, None)
    scheduler._tofinish.clear()


with tempfile.TemporaryDirectory() as tmp:
    log = MetricsLog(Path(tmp) / "metrics.jsonl")

    def metrics() -> None:
        for i in range(N):
            log.write(
                "invocation", id=i, worker=1, template="noop", rule="noop", ok=True,
                queued_s=0.0012, latency_s=0.0031, exec_s=0.0004,
            )  # fmt: skip

    def best(f) -> float:
        return min(timeit.repeat(f, number=1, repeat=5)) / N * 1e6

    us = {
        "proceed_us": best(proceed),
        "on_done_us": best(on_done) - best(table),
        "metrics_record_us": best(metrics),
    }
    log.close()
print(json.dumps({"n": N, **{k: round(v, 2) for k, v in us.items()}}))
