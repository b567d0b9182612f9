"""My analysis script."""
import json, os, re, sys
g0 = sorted(globals().keys())
import stickyinvoc

state = stickyinvoc.state(snakemake)
x: int = 1
obs = {}
obs["initial_globals"] = g0
obs["__doc__"] = __doc__
obs["__name__"] = __name__
obs["builtins_type"] = type(__builtins__).__name__
obs["__spec__"] = repr(__spec__)
obs["__loader__"] = type(__loader__).__name__ if "__loader__" in globals() else "<absent>"
obs["__package__"] = repr(globals().get("__package__", "<absent>"))
obs["__cached__"] = repr(globals().get("__cached__", "<absent>"))
obs["__annotations__"] = repr(globals().get("__annotations__"))
obs["main_is_globals"] = sys.modules["__main__"].__dict__ is globals()
obs["main_file"] = os.path.basename(sys.modules["__main__"].__file__)
obs["real_file"] = re.sub(r"tmp[a-z0-9_]{8}\.", "tmpXXXXXXXX.", os.path.relpath(__real_file__))
with open(snakemake.output[0], "w") as fh:
    json.dump(obs, fh, indent=1, sort_keys=True)
