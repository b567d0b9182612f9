"""A chatty objective: a JSON-looking line, ~1.3 MiB through print and directly through
file descriptors 1 and 2 (as C libraries write), without newline at the end."""
import json
import os
import sys


def evaluate(params, threads=1):
    x = float(params["x"])
    print(json.dumps({"loss": -1.0, "status": "ok", "trial": "a.0"}))
    sys.stdout.write(("y" * 1023 + "\n") * 512)
    sys.stdout.flush()
    os.write(1, b"z" * (256 * 1024))
    os.write(2, b"e" * (256 * 1024))
    sys.stderr.write("partial line without newline")
    sys.stdout.write("another partial")
    return {"loss": (x - 0.3) ** 2, "seen": "real"}
