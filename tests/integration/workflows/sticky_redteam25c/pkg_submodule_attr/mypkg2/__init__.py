LOADED = True
