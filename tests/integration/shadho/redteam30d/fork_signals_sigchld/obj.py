"""Signal state a trial starts with, and whether subprocess exit statuses are right.
Then the trial installs handlers, ignores SIGCHLD and blocks signals (as code that guards
a training loop against interruption might)."""
import os
import signal
import subprocess
import time


def _name(h):
    if h is signal.default_int_handler:
        return "default_int"
    if h == signal.SIG_DFL:
        return "dfl"
    if h == signal.SIG_IGN:
        return "ign"
    if h is None:
        return "none"
    return "custom"


def _on_term(signum, frame):
    raise SystemExit("terminated")


def evaluate(params, threads=1):
    x = float(params["x"])
    seen = {
        "sigint": _name(signal.getsignal(signal.SIGINT)),
        "sigterm": _name(signal.getsignal(signal.SIGTERM)),
        "sigusr1": _name(signal.getsignal(signal.SIGUSR1)),
        "sigchld": _name(signal.getsignal(signal.SIGCHLD)),
        "blocked": sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, [])),
        "false_rc": subprocess.run(["false"]).returncode,
        "system_rc": os.waitstatus_to_exitcode(os.system("exit 3")),
        "alarm_pending": signal.alarm(0),
    }
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _on_term)
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR2, signal.SIGTERM})
    signal.alarm(30)  # a per-trial time limit the trial forgets to cancel
    time.sleep(0.1)
    out = {"loss": (x - 0.3) ** 2}
    out.update(seen)
    return out
