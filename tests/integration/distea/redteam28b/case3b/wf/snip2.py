def snip2(x):
    return x + 100


RESULT = snip2(1)
