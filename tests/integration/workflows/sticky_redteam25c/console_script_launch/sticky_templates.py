from stickyinvoc import template
try:
    import tplhelper
    _H = 'tplhelper ok'
except ImportError:
    _H = 'tplhelper ImportError'



def _build():
    return {'tpl': _H}


@template("t_fork")
def t_fork():
    return _build()


@template("t_direct", isolation="direct")
def t_direct():
    return _build()
