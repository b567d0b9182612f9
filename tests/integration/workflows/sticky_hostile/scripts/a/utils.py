WHO = "a/utils.py"
COUNTER = 0
