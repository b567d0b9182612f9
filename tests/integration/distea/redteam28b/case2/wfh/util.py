def g():
    return "g-1"


def h(lines):
    return "|".join(lines)


def k(lines):
    return "+".join(lines)
