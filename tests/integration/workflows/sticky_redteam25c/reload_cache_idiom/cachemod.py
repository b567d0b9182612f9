try:
    _CACHE
except NameError:
    _CACHE = {}
LOADS = globals().get("LOADS", 0) + 1
