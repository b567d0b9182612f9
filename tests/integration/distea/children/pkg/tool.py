import sys

from pkg.work import tool_value

if __name__ == "__main__":
    src, dst = sys.argv[1:3]
    n = int(open(src).read().split()[0])
    open(dst, "w").write(f"{tool_value(n)}\n")
