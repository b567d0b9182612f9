from stickyinvoc import template
import sys, warnings, logging


def _build():
    print('loading model weights...', file=sys.stderr)
    warnings.warn('Some weights were not initialized from the checkpoint')
    logging.getLogger('tpl').warning('using default config')
    yield {'ok': True}
    print('model released', file=sys.stderr)


@template("t_fork")
def t_fork():
    return _build()


@template("t_direct", isolation="direct")
def t_direct():
    return _build()
