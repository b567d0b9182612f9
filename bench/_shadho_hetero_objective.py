"""The objective of bench/shadho_hetero.py's shipped-path real run: the digits objective,
slowed on the class and model the benchmark emulates as slow hardware.

The real run's ``shadho_shipped`` strategy runs ``execution: async`` as it ships (the sticky
runtime's Slurm pilots, one per class, every trial forked from its class's warm worker, the
workflows/hpo-digits ``digits`` template as state). There is no GPU here, so the ``cpu`` class
is made slow on the CNN instead: while a CNN trial runs on a ``cpu`` worker, a small holder
process (``python _shadho_hetero_objective.py --hold PID --duty F``) stops and continues the
trial's process (SIGSTOP/SIGCONT) so that it gets a fraction F of one CPU, as the benchmark's
own pilots do (``bench/_shadho_pilot.py --duty-by-model cnn=0.1``). A separate process, not a
fork of the trial: forking a process that ran torch's autograd is unsafe.
"""

import argparse
import os
import signal
import subprocess
import sys
from typing import Any

DUTY: dict[str, dict[str, float]] = {"cpu": {"cnn": 0.1}}
"""A fraction of one CPU per (class, model); a whole one otherwise."""


def evaluate(params: dict[str, Any], threads: int = 1, state: Any = None) -> dict[str, Any]:
    from snakemake_shadho import digits

    duty = DUTY.get(os.environ.get("SHADHO_HW_CLASS", ""), {}).get(params["model"], 1.0)
    holder = None
    if duty < 1:
        holder = subprocess.Popen(
            [sys.executable, "-S", __file__, "--hold", str(os.getpid()), "--duty", str(duty)]
        )
    try:
        return digits.evaluate(params, state, threads=1, folds=3)
    finally:
        if holder is not None:
            holder.terminate()  # it continues this process before it exits
            holder.wait()


def hold(pid: int, duty: float) -> None:
    """Give ``pid`` ``duty`` of one CPU until this process is terminated (it then leaves
    ``pid`` running) or ``pid`` ends (the benchmark pilots' duty cycle)."""
    from _shadho_pilot import duty_cycle

    def release(*_: Any) -> None:
        try:
            os.kill(pid, signal.SIGCONT)
        finally:
            os._exit(0)

    signal.signal(signal.SIGTERM, release)
    duty_cycle(pid, lambda: duty)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--hold", type=int, required=True)
    p.add_argument("--duty", type=float, required=True)
    args = p.parse_args()
    hold(args.hold, args.duty)
