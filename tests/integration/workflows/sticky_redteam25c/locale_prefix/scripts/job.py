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

import locale
obs["utf8_mode"] = sys.flags.utf8_mode
obs["preferred_encoding"] = locale.getpreferredencoding(False)
obs["stdout_encoding"] = sys.stdout.encoding
obs["fs_encoding"] = sys.getfilesystemencoding()
obs["LC_ALL"] = os.environ.get("LC_ALL")
obs["LC_CTYPE_env"] = os.environ.get("LC_CTYPE")
obs["setlocale"] = locale.setlocale(locale.LC_ALL, "")
obs["sorted_strxfrm"] = sorted(["b", "A", "a", "B", "_x", "Z"], key=locale.strxfrm)
try:
    with open(f"out/text_{I}.txt", "w") as f:
        obs["default_open_encoding"] = f.encoding
        f.write("caf\u00e9\n")
    with open(f"out/text_{I}.txt", "rb") as f:
        obs["written_bytes"] = f.read().hex()
except UnicodeEncodeError:
    obs["written_bytes"] = "UnicodeEncodeError"
done()
