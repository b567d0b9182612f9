VALUE = "root"
