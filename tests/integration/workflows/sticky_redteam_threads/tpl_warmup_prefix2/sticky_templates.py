from stickyinvoc import template


def _build():
    import numpy, torch
    a = numpy.ones((300, 300)); a @ a
    t = torch.ones(300, 300); t @ t
    return {"ok": True}


@template("t_fork")
def t_fork():
    return _build()


@template("t_direct", isolation="direct")
def t_direct():
    return _build()
