VALUE = "from lib/"
