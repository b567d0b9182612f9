import json, os, re, sys
import stickyinvoc

state = stickyinvoc.state(snakemake)
I = int(snakemake.wildcards.i)
ROOT = os.path.dirname(os.path.abspath(snakemake.scriptdir))
obs = {}


def norm(x):
    s = str(x)
    s = s.replace(ROOT, "<ROOT>")
    s = re.sub(r"/tmp[a-z0-9_]{8}/", "/tmpXXXXXXXX/", s)
    return re.sub(r"tmp[a-z0-9_]{8}\.", "tmpXXXXXXXX.", s)


def done():
    with open(snakemake.output[0], "w") as f:
        json.dump(obs, f, indent=1, sort_keys=True, default=repr)
        f.write("\n")

import pickle, inspect, dataclasses, enum, typing, copy


class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y


@dataclasses.dataclass
class Rec:
    name: str
    pt: "Point"


class Color(enum.Enum):
    RED = 1


def area(p: "Point") -> "Rec":
    """docstring"""
    return Rec("a", p)


blob = pickle.dumps([Point(1, 2), Rec("r", Point(3, 4)), Color.RED], protocol=4)
obs["pickle_hex"] = blob.hex()
back = pickle.loads(blob)
obs["roundtrip"] = [type(o).__qualname__ for o in back]
obs["getsource"] = inspect.getsource(area)
obs["getsourcefile"] = norm(inspect.getsourcefile(area))
obs["getmodule"] = getattr(inspect.getmodule(area), "__name__", None)
obs["type_hints"] = {k: v.__qualname__ for k, v in typing.get_type_hints(area).items()}
obs["deepcopy"] = type(copy.deepcopy(back[1])).__qualname__
obs["qualname_module"] = [Point.__module__, Rec.__module__, area.__module__]
done()
