import warnings


def old():
    warnings.warn("old() is deprecated", DeprecationWarning, stacklevel=2)
    return 1


def noisy():
    warnings.warn("noisy user warning")
    return 2
