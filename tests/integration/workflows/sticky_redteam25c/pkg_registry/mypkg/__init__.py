REGISTRY = {}


def register(name):
    def deco(fn):
        if name in REGISTRY:
            raise ValueError(f"duplicate plugin {name}")
        REGISTRY[name] = fn
        return fn
    return deco
