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

was_loaded = "sticky_templates" in sys.modules
import sticky_templates
obs["was_in_sys_modules"] = was_loaded
obs["module_name"] = sticky_templates.__name__
obs["module_file"] = norm(sticky_templates.__file__)
obs["BUILDS"] = sticky_templates.BUILDS
obs["normalize"] = sticky_templates.normalize("  Hello   World ")
done()
