from stickyinvoc import template
BUILDS = 0


def normalize(s):
    return ' '.join(s.lower().split())



def _build():
    global BUILDS
    BUILDS += 1
    return {'ok': True}


@template("t_fork")
def t_fork():
    return _build()


@template("t_direct", isolation="direct")
def t_direct():
    return _build()
