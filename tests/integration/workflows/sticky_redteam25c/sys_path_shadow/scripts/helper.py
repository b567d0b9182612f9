VALUE = "scripts"
