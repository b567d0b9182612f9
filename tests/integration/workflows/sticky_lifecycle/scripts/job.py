"""One lifecycle case per output name: out/<case>.txt. Markers under markers/ tell the test
which processes to watch."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

case = snakemake.wildcards.case
out = Path(snakemake.output[0])
markers = Path("markers")
markers.mkdir(exist_ok=True)


def first_attempt() -> bool:
    marker = markers / f"attempt-{case}"
    if marker.exists():
        return False
    marker.write_text("")
    return True


def start_child(code: str) -> None:
    """A child process the script does not wait for; its pid goes to markers/child-<case>."""
    child = subprocess.Popen([sys.executable, "-c", code])
    (markers / f"child-{case}").write_text(str(child.pid))


if case == "exit1":
    out.write_text("PARTIAL")
    os._exit(1)
elif case == "exit0":
    out.write_text("done\n")
    sys.stdout.flush()
    os._exit(0)
elif case == "selfkill":
    os.kill(os.getpid(), signal.SIGKILL)
elif case == "crash":
    import ctypes

    ctypes.string_at(0)  # SIGSEGV
elif case == "kbint":
    raise KeyboardInterrupt
elif case == "gil":
    # One C call that holds the GIL (the heartbeat thread cannot run) for several heartbeat
    # timeouts: calibrate on small sums in this thread's CPU time (a crowded machine slows the
    # wall clock, never the count), then sum enough for ~seconds_held CPU seconds (at least as
    # much wall). Thread time, not process time: the worker's other threads (heartbeat, output
    # relays) use CPU during the calibration, and counting theirs overestimated the cost of an
    # item, so the long sum ended early (CI: 3.9 s, then 3.3 s of 6). The fastest of five
    # calibrations, for the same reason (a cold cache, a stolen time slice). Even so the long
    # sum once ran a third faster per item than the calibration (CI: 4.0 s of 6), so it aims
    # at half as long again: the hold must clear the heartbeat timeout, not hit a figure.
    held = 1.5 * float(snakemake.config.get("seconds_held", 6))
    costs = []
    for _ in range(5):
        start = time.thread_time()
        sum(range(2_000_000))
        costs.append((time.thread_time() - start) / 2_000_000)
    per_item = min(costs)
    start = time.perf_counter()
    total = sum(range(int(held / per_item)))
    out.write_text(f"held {time.perf_counter() - start:.1f}\n")
elif case == "gilwait":
    # A C call that waits with the GIL held and uses no CPU (libc sleep through PyDLL, which
    # keeps the GIL): a fresh run waits it out too.
    import ctypes

    held = float(snakemake.config.get("seconds_held", 6))
    start = time.perf_counter()
    ctypes.PyDLL(None).sleep(int(held))
    out.write_text(f"held {time.perf_counter() - start:.1f}\n")
elif case == "orphan" and first_attempt():
    # A forked child (multiprocessing's default on Linux) that keeps appending to the output;
    # then the test SIGKILLs this worker.
    import multiprocessing

    def append_forever(path: str) -> None:
        for _ in range(240):
            with open(path, "a") as f:
                f.write("ORPHAN\n")
            time.sleep(0.25)

    child = multiprocessing.get_context("fork").Process(target=append_forever, args=(str(out),))
    child.start()
    (markers / f"child-{case}").write_text(str(child.pid))
    (markers / f"pid-{case}").write_text(str(os.getpid()))
    time.sleep(120)
elif case == "sleeper":
    # A child that would outlive its worker, then a long job (the test kills or interrupts).
    start_child("import time; time.sleep(300)")
    (markers / f"pid-{case}").write_text(str(os.getpid()))
    time.sleep(120)
    out.write_text("slept\n")
else:
    out.write_text(f"{case}\n")
