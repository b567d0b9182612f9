"""A trial worker for bench/_shadho_slurm.py, run inside a Slurm job (``srun ... python
_shadho_pilot.py``): loads the digits data once, then evaluates one trial per line of standard
input (the parameters as JSON) and answers one line (loss, duration, CPU seconds).

``--duty F`` (0 < F < 1) makes it a slow worker: the evaluating process is a child that this
process stops and continues (SIGSTOP/SIGCONT) so it gets a fraction F of one CPU, a CPU limit
applied inside the job (the shared cluster is not reconfigured). ``--duty-by-model cnn=0.1``
limits only the trials of the models named (a class slow on the CNN and not on the SVMs, as a
CPU node is next to a GPU one): this process relays each trial to the child and applies the
trial's model's fraction while it runs.
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable

PERIOD_S = 0.05


def serve() -> None:
    from snakemake_shadho import digits

    data = digits.load_data()
    digits.evaluate({"model": "svm_linear", "kernel": "linear", "C": 1.0}, data)  # warm up
    digits.cnn_loss({"channels": 4, "lr": 0.01, "epochs": 1}, data)
    print(json.dumps({"ready": True, "job": os.environ.get("SLURM_JOB_ID")}), flush=True)
    for line in sys.stdin:
        params = json.loads(line)
        t0, c0 = time.perf_counter(), time.process_time()
        try:
            loss = digits.evaluate(params, data, threads=1, folds=3)["loss"]
        except Exception as e:  # an objective failure is a failed trial, not a dead worker
            print(json.dumps({"loss": None, "error": repr(e)}), flush=True)
            continue
        out = {
            "loss": loss,
            "duration_s": time.perf_counter() - t0,
            "cpu_s": time.process_time() - c0,
        }
        print(json.dumps(out), flush=True)


def throttle(duty: float) -> int:
    """Run ``serve`` in a child (sharing stdin/stdout) held to ``duty`` of one CPU."""
    child = subprocess.Popen([sys.executable, "-u", __file__, "--duty", "1"])
    return _duty_cycle(child, lambda: duty)


def duty_cycle(
    pid: int, duty: Callable[[], float], running: Callable[[], bool] = lambda: True
) -> None:
    """Stop and continue process ``pid`` so that it gets ``duty()`` of one CPU (read every
    period; a whole CPU when it is 1) while ``running()`` and the process exists."""
    try:
        while running():
            fraction = duty()
            if fraction >= 1:
                time.sleep(PERIOD_S / 5)
                continue
            time.sleep(PERIOD_S * fraction)
            os.kill(pid, signal.SIGSTOP)
            time.sleep(PERIOD_S * (1 - fraction))
            os.kill(pid, signal.SIGCONT)
    except ProcessLookupError:
        pass


def _duty_cycle(child: subprocess.Popen, duty: Callable[[], float]) -> int:
    """:func:`duty_cycle` for ``child`` until it ends; its exit status."""
    try:
        duty_cycle(child.pid, duty, lambda: child.poll() is None)
    finally:
        if child.poll() is None:
            os.kill(child.pid, signal.SIGCONT)
    return child.wait()


def throttle_by_model(duties: dict[str, float]) -> int:
    """Run ``serve`` in a child, relaying its trials; while a trial of a model in ``duties``
    runs, the child gets that fraction of one CPU (a whole one otherwise)."""
    child = subprocess.Popen(
        [sys.executable, "-u", __file__, "--duty", "1"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdin is not None and child.stdout is not None
    from collections import deque

    queued: deque[float] = deque()  # the fraction of each trial sent and not yet answered

    def answers() -> None:
        assert child.stdout is not None
        for line in child.stdout:
            if '"ready"' not in line and queued:
                queued.popleft()
            sys.stdout.write(line)
            sys.stdout.flush()

    def trials() -> None:
        assert child.stdin is not None
        for line in sys.stdin:
            queued.append(duties.get(json.loads(line).get("model"), 1.0))
            child.stdin.write(line)
            child.stdin.flush()
        child.stdin.close()

    threads = [threading.Thread(target=f, daemon=True) for f in (answers, trials)]
    for t in threads:
        t.start()
    code = _duty_cycle(child, lambda: queued[0] if queued else 1.0)
    threads[0].join(timeout=5)
    return code


def pair(duties: dict[str, float]) -> int:
    """Several workers in one job: a line ``NAME JSON`` on stdin goes to worker NAME, its answer
    comes back as ``NAME JSON`` (for a shared cluster with one CPU free for this benchmark)."""
    import threading

    children = {
        name: subprocess.Popen(
            [sys.executable, "-u", __file__, "--duty", str(duty)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for name, duty in duties.items()
    }
    lock = threading.Lock()

    def relay(name: str, child: subprocess.Popen) -> None:
        assert child.stdout is not None
        for line in child.stdout:
            with lock:
                sys.stdout.write(f"{name} {line}")
                sys.stdout.flush()

    threads = [threading.Thread(target=relay, args=item) for item in children.items()]
    for t in threads:
        t.start()
    for line in sys.stdin:
        name, _, payload = line.partition(" ")
        child = children[name]
        assert child.stdin is not None
        child.stdin.write(payload)
        child.stdin.flush()
    for child in children.values():
        assert child.stdin is not None
        child.stdin.close()
    for t in threads:
        t.join()
    return max(child.wait() for child in children.values())


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--duty", type=float, default=1.0, help="fraction of one CPU (0 < F <= 1)")
    p.add_argument("--pair", help="NAME=DUTY,NAME=DUTY: several workers in this one job")
    p.add_argument("--duty-by-model", help="MODEL=DUTY,...: limit only these models' trials")
    args = p.parse_args()
    if args.duty_by_model:
        duties = {k: float(v) for k, v in (x.split("=") for x in args.duty_by_model.split(","))}
        if not all(0 < d <= 1 for d in duties.values()):
            sys.exit(f"--duty-by-model {args.duty_by_model}: expected fractions in (0, 1]")
        return throttle_by_model(duties)
    if args.pair:
        return pair({k: float(v) for k, v in (x.split("=") for x in args.pair.split(","))})
    if not 0 < args.duty <= 1:
        sys.exit(f"--duty {args.duty}: expected a fraction of one CPU in (0, 1]")
    if args.duty < 1:
        return throttle(args.duty)
    serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
