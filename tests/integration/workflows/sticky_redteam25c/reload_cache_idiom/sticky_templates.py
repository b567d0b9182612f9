from stickyinvoc import template
import cachemod


def _build():
    return {'loads_at_build': cachemod.LOADS}


@template("t_fork")
def t_fork():
    return _build()


@template("t_direct", isolation="direct")
def t_direct():
    return _build()
