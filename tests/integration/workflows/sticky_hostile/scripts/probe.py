"""What a script sees when it starts. Every hostile script writes this first, so that anything an
earlier job on the same worker left behind shows up as a difference from a fresh process."""

import builtins
import json
import locale
import logging
import os
import random
import signal
import sys
import warnings

_SEEDED = {r for rng in [random.Random(42)] for r in [rng.random() for _ in range(1000)]}


def report(g: dict) -> str:
    with warnings.catch_warnings(record=True) as caught:
        warnings.warn("hostile probe")  # noqa: B028
    umask = os.umask(0o022)
    os.umask(umask)
    script = g.get("__file__", "")
    real = g.get("__real_file__", "")
    hostile_logger = logging.getLogger("hostile")
    facts = {
        "__name__": g.get("__name__"),
        "globals": sorted(g),
        "builtins is the module": g.get("__builtins__") is builtins,
        "__file__ is the script": script == os.path.realpath(script) and os.path.isfile(script),
        "__real_file__ in .snakemake/scripts": os.path.dirname(real)
        == os.path.abspath(".snakemake/scripts")
        and real.endswith("." + os.path.basename(script)),
        "argv": sys.argv == [real],
        "__main__ is the script": sys.modules["__main__"].__dict__ is g,
        "cwd is the workdir": os.path.isfile("Snakefile"),
        "env HOSTILE_X": os.environ.get("HOSTILE_X"),
        "job environment": [
            os.environ.get(k) for k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "TMPDIR", "TEMP")
        ],
        "tempfile.gettempdir": _gettempdir(),
        "umask": oct(umask),
        "recursion limit": sys.getrecursionlimit(),
        "sys.path[0] is .snakemake/scripts": sys.path[0] == os.path.abspath(".snakemake/scripts"),
        "sys.path[-1] is the script's folder": sys.path[-1] == os.path.dirname(script),
        "sys.path poisoned": [p for p in sys.path if p.startswith("/hostile-nonexistent")],
        "sys.path length": len(sys.path),
        "local modules loaded": sorted(
            m for m in ("utils", "helper_a", "helper_b") if m in sys.modules
        ),
        "json.dumps": json.dumps({"a": 1}),
        "print is builtin": builtins.print.__module__,
        "stdout": [sys.stdout is sys.__stdout__, sys.stdout.closed, sys.stderr is sys.__stderr__],
        "fds 1 2 open": [_open(1), _open(2)],
        "root handlers": [type(h).__name__ for h in logging.root.handlers],
        "root level": logging.root.level,
        "hostile logger": [
            hostile_logger.level,
            len(hostile_logger.handlers),
            hostile_logger.propagate,
        ],
        "logging disabled": logging.root.manager.disable,
        "warnings probe": [str(w.message) for w in caught],
        "signals default": [
            signal.getsignal(s) is signal.SIG_DFL
            for s in (signal.SIGTERM, signal.SIGUSR1, signal.SIGALRM, signal.SIGHUP)
        ],
        "timer": signal.getitimer(signal.ITIMER_REAL),
        "random after a seed(42) elsewhere": random.random() in _SEEDED,
        "locale": locale.setlocale(locale.LC_ALL),
        "shell": _shell(),
    }
    return "".join(f"{key}: {value!r}\n" for key, value in facts.items())


def _gettempdir() -> str:
    import tempfile

    return tempfile.gettempdir()


def _open(fd: int) -> bool:
    try:
        os.fstat(fd)
        return True
    except OSError:
        return False


def _shell():
    from snakemake.shell import shell

    return [shell.get_executable(), shell._process_prefix]
