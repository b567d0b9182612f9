def square(x):
    return x * x


def halve(x):
    return x / 2


def shard_count(n):
    return 2 if n < 10 else 3


def tool_value(x):
    return x + 100


def spawned(x):
    return x - 1
