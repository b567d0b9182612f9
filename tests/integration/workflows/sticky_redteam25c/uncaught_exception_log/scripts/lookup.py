def lookup(table, key):
    try:
        return table[key]
    except KeyError as e:
        raise LookupError(f"no entry {key!r}") from e
