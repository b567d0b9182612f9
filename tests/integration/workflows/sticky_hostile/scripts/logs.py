# The most common Python log idiom in Snakemake scripts.
import logging

import probe

with open(snakemake.output[0], "w") as out:
    out.write(probe.report(globals()))
logging.basicConfig(
    filename=snakemake.log[0], level=logging.INFO, format="%(levelname)s %(name)s %(message)s"
)
logging.info("job value %s", snakemake.params.value)
child = logging.getLogger("hostile.child")
child.warning("child of %s", snakemake.params.value)
logging.getLogger("hostile").setLevel(logging.DEBUG)
logging.getLogger("hostile").propagate = False
logging.addLevelName(25, "NOTICE")
logging.disable(logging.DEBUG)
