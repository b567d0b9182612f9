"""Templates of the fresh-exit workflow: the same trivial state in both isolation modes; the
template imports nothing, so torch is first imported inside an invocation."""

from stickyinvoc import template


@template("forked")  # fork: the default
def forked():
    return {"calls": 0}


@template("direct", isolation="direct")
def direct():
    return {"calls": 0}
