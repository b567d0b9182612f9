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

import logging, warnings
logging.basicConfig(filename=snakemake.log[0], level=logging.INFO,
                    format="%(levelname)s|%(name)s|%(processName)s|%(threadName)s|%(message)s")
logging.captureWarnings(True)
log = logging.getLogger("job")
log.info("start %d", I)
import helperlog
helperlog.work()
warnings.warn("captured warning")
logging.getLogger().warning("root warning")
obs["root_handlers"] = [type(h).__name__ for h in logging.getLogger().handlers]
obs["root_level"] = logging.getLogger().level
obs["snakemake_logger"] = [type(h).__name__ for h in logging.getLogger("snakemake").handlers]
obs["disable"] = logging.root.manager.disable
obs["raiseExceptions"] = logging.raiseExceptions
done()
