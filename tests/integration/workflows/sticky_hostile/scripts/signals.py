import signal

import probe

with open(snakemake.output[0], "w") as out:
    out.write(probe.report(globals()))
signal.signal(signal.SIGTERM, lambda *a: None)
signal.signal(signal.SIGUSR1, signal.SIG_IGN)
signal.signal(signal.SIGHUP, lambda *a: None)
# A pending alarm with the default action would kill the worker a second later.
signal.setitimer(signal.ITIMER_REAL, 1.0)
