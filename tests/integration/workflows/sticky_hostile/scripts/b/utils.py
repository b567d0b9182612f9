WHO = "b/utils.py"
COUNTER = 0
