def vocab(lines):
    return {w: i for i, w in enumerate(sorted(lines))}


def fmt(x):
    return f"value={x}"


def work(x):
    return x * 2


def tool_fn(x):
    return x + 1
