"""A template holding mutable state and an open file (3000 lines, ~30 KB: more than one
read buffer). Each trial reads 2500 lines from the file, reports the last, then reads the
rest, and changes the state object."""
import time


def evaluate(params, state=None, threads=1):
    x = float(params["x"])
    fh = state["fh"]
    lines = [fh.readline() for _ in range(2500)]
    seen = {
        "calls": state["calls"],
        "arr0": float(state["arr"][0]),
        "items": len(state["items"]),
        "header": state["header"],
        "line2500": lines[-1].strip(),
    }
    fh.read()  # to the end of the file
    state["calls"] += 1
    state["arr"][0] += 1.0
    state["items"].append(x)
    time.sleep(0.1)
    out = {"loss": (x - 0.3) ** 2}
    out.update(seen)
    return out
