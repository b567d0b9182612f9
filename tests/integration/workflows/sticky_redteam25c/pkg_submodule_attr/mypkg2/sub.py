import os
PID_AT_IMPORT = os.getpid()
VALUE = 'sub'
