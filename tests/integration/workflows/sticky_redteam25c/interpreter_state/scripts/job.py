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

import faulthandler, threading, multiprocessing as mp, shutil, argparse
obs["flags"] = repr(sys.flags)
obs["warnoptions"] = sys.warnoptions
obs["xoptions"] = sys._xoptions
obs["enc"] = [sys.getdefaultencoding(), sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()]
for n in ["stdin", "stdout", "stderr"]:
    s = getattr(sys, n)
    obs[n] = [type(s).__name__, getattr(s, "name", None), s.encoding, s.errors, s.line_buffering,
              s.write_through, s is getattr(sys, "__" + n + "__")]
obs["recursionlimit"] = sys.getrecursionlimit()
obs["switchinterval"] = sys.getswitchinterval()
obs["int_max_str_digits"] = sys.get_int_max_str_digits()
obs["dont_write_bytecode"] = sys.dont_write_bytecode
obs["pycache_prefix"] = sys.pycache_prefix
obs["executable"] = sys.executable
obs["prefixes"] = [sys.prefix, sys.base_prefix, sys.exec_prefix]
obs["argv"] = [norm(a) for a in sys.argv]
obs["orig_argv"] = [norm(a) for a in sys.orig_argv]
obs["argparse_prog"] = norm(argparse.ArgumentParser().prog)
obs["faulthandler"] = faulthandler.is_enabled()
obs["trace_profile"] = [sys.gettrace() is None, sys.getprofile() is None]
obs["hooks_default"] = [sys.excepthook is sys.__excepthook__, sys.displayhook is sys.__displayhook__,
                        sys.unraisablehook is sys.__unraisablehook__, sys.breakpointhook is sys.__breakpointhook__,
                        threading.excepthook is threading.__excepthook__]
obs["thread"] = [threading.current_thread().name, threading.current_thread() is threading.main_thread()]
obs["mp_process"] = [mp.current_process().name, mp.parent_process() is None, mp.current_process().daemon]
obs["mp_start_method_before"] = mp.get_start_method(allow_none=True)
try:
    mp.set_start_method("spawn")
    obs["set_start_method_spawn"] = "ok"
except RuntimeError as e:
    obs["set_start_method_spawn"] = "RuntimeError: " + str(e)
obs["terminal_size"] = list(shutil.get_terminal_size())
obs["path_importer_cache_types"] = sorted({type(v).__name__ for v in sys.path_importer_cache.values()})
obs["meta_path"] = [getattr(m, "__name__", type(m).__name__) for m in sys.meta_path]
done()
