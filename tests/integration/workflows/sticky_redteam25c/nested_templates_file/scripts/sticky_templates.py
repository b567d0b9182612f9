from stickyinvoc import template


@template('t_fork')
def t_fork():
    return {'origin': 'scripts/'}


@template('t_direct', isolation='direct')
def t_direct():
    return {'origin': 'scripts/'}
