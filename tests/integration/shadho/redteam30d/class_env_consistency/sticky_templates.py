import os

from stickyinvoc import template


@template("rtcls")
def rtcls():
    # pick the "device" from the class, as the docs suggest an objective may
    return {"cls": os.environ.get("SHADHO_HW_CLASS")}
