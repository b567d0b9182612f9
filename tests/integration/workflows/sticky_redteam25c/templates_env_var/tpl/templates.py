from stickyinvoc import template


@template('t_fork')
def t_fork():
    return {'origin': 'tpl/'}


@template('t_direct', isolation='direct')
def t_direct():
    return {'origin': 'tpl/'}
