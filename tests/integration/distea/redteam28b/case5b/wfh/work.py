def tsq(x):
    return x * x


def psq(x):
    return x + 1


def tb(x):
    return x - 1
