from stickyinvoc import template


def _build():
    return {"ok": True}


@template("t_fork")
def t_fork():
    return _build()


@template("t_direct", isolation="direct")
def t_direct():
    return _build()
