import json
import os


def prepare():
    os.makedirs("meta", exist_ok=True)
    with open("meta/info.json", "w") as fh:
        json.dump({"version": 1}, fh)
