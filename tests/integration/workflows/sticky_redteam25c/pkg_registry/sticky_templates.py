from stickyinvoc import template
import mypkg


def _build():
    return {'pkg': mypkg.__name__}


@template("t_fork")
def t_fork():
    return _build()


@template("t_direct", isolation="direct")
def t_direct():
    return _build()
