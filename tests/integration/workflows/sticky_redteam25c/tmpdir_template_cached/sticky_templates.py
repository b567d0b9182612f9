from stickyinvoc import template
import tempfile


def _build():
    return {'scratch': tempfile.gettempdir()}


@template("t_fork")
def t_fork():
    return _build()


@template("t_direct", isolation="direct")
def t_direct():
    return _build()
