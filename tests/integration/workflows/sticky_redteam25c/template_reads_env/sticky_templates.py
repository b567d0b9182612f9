from stickyinvoc import template
import os


def _build():
    return {'variant': os.environ.get('MODEL_VARIANT', 'small'), 'omp': os.environ.get('OMP_NUM_THREADS')}


@template("t_fork")
def t_fork():
    return _build()


@template("t_direct", isolation="direct")
def t_direct():
    return _build()
