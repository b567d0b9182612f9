def compute():
    return "alpha-1"
