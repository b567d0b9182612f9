def snip(x):
    return x + 100
