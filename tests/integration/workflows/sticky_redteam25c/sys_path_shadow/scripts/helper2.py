VALUE = "scripts2"
