import sys

from wfh import util

lines = open(sys.argv[1]).read().split()
open(sys.argv[2], "w").write(util.k(lines) + "\n")
