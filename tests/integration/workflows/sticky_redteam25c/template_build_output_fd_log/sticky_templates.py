from stickyinvoc import template
import sys, warnings


def _build():
    print('loading model weights...')
    warnings.warn('Some weights were not initialized from the checkpoint')
    return {'ok': True}


@template("t_fork")
def t_fork():
    return _build()


@template("t_direct", isolation="direct")
def t_direct():
    return _build()
