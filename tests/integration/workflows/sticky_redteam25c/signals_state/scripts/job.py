import json, os, re, sys
import stickyinvoc

state = stickyinvoc.state(snakemake)
I = int(snakemake.wildcards.i)
ROOT = os.path.dirname(os.path.abspath(snakemake.scriptdir))
obs = {}


def norm(x):
    s = str(x)
    s = s.replace(ROOT, "<ROOT>")
    s = re.sub(r"/tmp[a-z0-9_]{8}/", "/tmpXXXXXXXX/", s)
    return re.sub(r"tmp[a-z0-9_]{8}\.", "tmpXXXXXXXX.", s)


def done():
    with open(snakemake.output[0], "w") as f:
        json.dump(obs, f, indent=1, sort_keys=True, default=repr)
        f.write("\n")

import signal
disp = {}
for s in signal.valid_signals():
    try:
        h = signal.getsignal(s)
    except (ValueError, OSError):
        continue
    name = signal.Signals(s).name if s in signal.Signals._value2member_map_ else str(int(s))
    disp[name] = (h.name if isinstance(h, signal.Handlers) else "None" if h is None
                  else getattr(h, "__qualname__", type(h).__name__))
obs["dispositions"] = disp
obs["blocked"] = sorted(str(x) for x in signal.pthread_sigmask(signal.SIG_BLOCK, []))
obs["pending"] = sorted(str(x) for x in signal.sigpending())
obs["itimer_real"] = signal.getitimer(signal.ITIMER_REAL)
obs["alarm"] = signal.alarm(0)
with open("/proc/self/status") as f:
    obs["proc_sig"] = [l.strip() for l in f if l.startswith(("SigBlk", "SigIgn"))]
done()
