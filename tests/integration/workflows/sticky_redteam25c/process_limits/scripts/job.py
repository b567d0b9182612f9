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

import resource, ctypes
obs["rlimits"] = {n: resource.getrlimit(getattr(resource, n)) for n in sorted(dir(resource)) if n.startswith("RLIMIT_")}
u = os.umask(0); os.umask(u)
obs["umask"] = oct(u)
obs["nice"] = os.nice(0)
obs["affinity"] = sorted(os.sched_getaffinity(0))
obs["cpu_count"] = os.cpu_count()
obs["scheduler"] = os.sched_getscheduler(0)
obs["pgid_is_pid"] = os.getpgid(0) == os.getpid()
obs["sid_is_pid"] = os.getsid(0) == os.getpid()
obs["own_pgid_equals_parent_pgid"] = os.getpgid(0) == os.getpgid(os.getppid())
def rd(p):
    try:
        with open(p) as f:
            return f.read().strip()
    except OSError as e:
        return type(e).__name__
obs["comm"] = rd("/proc/self/comm")
obs["parent_comm"] = rd(f"/proc/{os.getppid()}/comm")
obs["oom_score_adj"] = rd("/proc/self/oom_score_adj")
cg = rd("/proc/self/cgroup")
obs["cgroup"] = cg
path = cg.split("::", 1)[-1] if "::" in cg else None
if path:
    obs["cgroup_memory_max"] = rd("/sys/fs/cgroup" + path + "/memory.max")
    obs["cgroup_cpu_max"] = rd("/sys/fs/cgroup" + path + "/cpu.max")
    obs["cgroup_pids_max"] = rd("/sys/fs/cgroup" + path + "/pids.max")
libc = ctypes.CDLL(None, use_errno=True)
sig = ctypes.c_int(0)
libc.prctl(2, ctypes.byref(sig), 0, 0, 0)  # PR_GET_PDEATHSIG
obs["pdeathsig"] = sig.value
obs["dumpable"] = libc.prctl(3, 0, 0, 0, 0)
sub = ctypes.c_int(0)
libc.prctl(37, ctypes.byref(sub), 0, 0, 0)  # PR_GET_CHILD_SUBREAPER
obs["child_subreaper"] = sub.value
obs["no_new_privs"] = libc.prctl(39, 0, 0, 0, 0)
obs["fds_open"] = sorted(int(x) for x in os.listdir("/proc/self/fd"))[:3]
obs["fd_count_over_2"] = len([x for x in os.listdir("/proc/self/fd") if int(x) > 2])
done()
