WHERE = "root"
