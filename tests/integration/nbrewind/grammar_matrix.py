"""Issue 27, part 4: a matrix of Python's statement and expression kinds x the ways a value
reaches a later cell, generated from the ``ast`` module itself.

Every concrete subclass of ``ast.stmt`` and ``ast.expr`` in the running Python (deprecated
aliases of ``Constant`` aside) must have a template here: a new Python version's node fails
:func:`unclassified` until someone writes one. Each template is a consumer cell that reads a
value through that kind of statement or expression (``{v}`` is where the value is read; ``{i}``
makes names unique per case), and a test checks that the template really contains its kind.

Channels are the ways the value reaches the consumer from producer cells: directly by name,
through a notebook function, a method called on an instance, a closure, a lambda, a local
module's attribute, a file, and an environment variable. The producers derive the value from
the parameter ``n`` (changed by the repeat) or ``m`` (unchanged), alternately, so half of the
consumers must re-execute with the new value and half may be restored.
"""

import ast

STATEMENTS: dict[str, str] = {
    "AnnAssign": "ann_{i}: int = {v}\nprint(ann_{i})",
    "Assert": "assert {v} is not None\nprint('asserted', {v})",
    "Assign": "as_{i} = {v}\nprint(as_{i})",
    "AsyncFor": (
        "async def agen_{i}():\n    yield {v}\n"
        "async for item_{i} in agen_{i}():\n    print(item_{i})"
    ),
    "AsyncFunctionDef": "async def af_{i}():\n    return {v}\nprint(await af_{i}())",
    "AsyncWith": ("import contextlib\nasync with contextlib.AsyncExitStack():\n    print({v})"),
    "AugAssign": "aug_{i} = 1\naug_{i} += {v}\nprint(aug_{i})",
    "Break": "for _ in range(3):\n    print({v})\n    break",
    "ClassDef": "class Cls_{i}:\n    attr = {v}\nprint(Cls_{i}.attr)",
    "Continue": "for k_{i} in range(2):\n    if k_{i} == 0:\n        continue\n    print({v})",
    "Delete": "del_{i} = [{v}, 0]\ndel del_{i}[1]\nprint(del_{i})",
    "Expr": "print({v})",
    "For": "for _ in range(1):\n    print({v})",
    "FunctionDef": "def fd_{i}(x=1):\n    return {v} * x\nprint(fd_{i}())",
    "Global": ("def gl_{i}():\n    global glv_{i}\n    glv_{i} = {v}\ngl_{i}()\nprint(glv_{i})"),
    "If": "if {v} is not None:\n    print({v})",
    "Import": "import math\nprint(math.floor({v}))",
    "ImportFrom": "from math import floor\nprint(floor({v}))",
    "Match": (
        "match {v}:\n    case int(mv_{i}):\n        print('int', mv_{i})\n"
        "    case _:\n        print('?')"
    ),
    "Nonlocal": (
        "def outer_{i}():\n    x = 0\n    def inner():\n        nonlocal x\n        x = {v}\n"
        "    inner()\n    return x\nprint(outer_{i}())"
    ),
    "Pass": "pass\nprint({v})",
    "Raise": "try:\n    raise ValueError({v})\nexcept ValueError as err_{i}:\n    print(err_{i})",
    "Return": "def ret_{i}():\n    return {v}\nprint(ret_{i}())",
    "Try": "try:\n    tv_{i} = {v}\nfinally:\n    print(tv_{i})",
    "TryStar": (
        "try:\n    raise ExceptionGroup('g', [ValueError({v})])\n"
        "except* ValueError as eg_{i}:\n    print(eg_{i}.exceptions)"
    ),
    "While": "wh_{i} = 0\nwhile wh_{i} < 1:\n    print({v})\n    wh_{i} += 1",
    "With": "import contextlib\nwith contextlib.nullcontext({v}) as wv_{i}:\n    print(wv_{i})",
}

EXPRESSIONS: dict[str, str] = {
    "Attribute": "print(({v}).real)",
    "Await": "async def aw_{i}():\n    return {v}\nprint(await aw_{i}())",
    "BinOp": "print({v} + 0)",
    "BoolOp": "print({v} or 0)",
    "Call": "print(int({v}))",
    "Compare": "print({v} > -1, {v})",
    "Constant": "print(({v}, 'constant'))",
    "Dict": "print({'key': {v}})",
    "DictComp": "print({k: {v} for k in range(1)})",
    "FormattedValue": 'print(f"{{v}:>6}")',
    "GeneratorExp": "print(next({v} for _ in range(1)))",
    "IfExp": "print({v} if True else None)",
    "JoinedStr": 'print(f"value={{v}}")',
    "Lambda": "print((lambda: {v})())",
    "List": "print([{v}])",
    "ListComp": "print([{v} for _ in range(2)])",
    "Name": "nm_{i} = {v}\nprint(nm_{i})",
    "NamedExpr": "print((nx_{i} := {v}))",
    "Set": "print({{v}})",
    "SetComp": "print({{v} for _ in range(2)})",
    "Slice": "print([{v}, 1, 2][0:1])",
    "Starred": "print(*[{v}])",
    "Subscript": "print([{v}][0])",
    "Tuple": "print(({v},))",
    "UnaryOp": "print(-{v})",
    "Yield": "def y_{i}():\n    yield {v}\nprint(list(y_{i}()))",
    "YieldFrom": "def yf_{i}():\n    yield from [{v}]\nprint(list(yf_{i}()))",
}

CHANNELS: dict[str, tuple[str, str]] = {
    # name: (producer cells after the base value, how the consumer reads it)
    "direct": ("", "base_{i}"),
    "function": ("def get_{i}():\n    return base_{i}", "get_{i}()"),
    "method": (
        "class Holder_{i}:\n    def get(self):\n        return base_{i}\nholder_{i} = Holder_{i}()",
        "holder_{i}.get()",
    ),
    "closure": (
        "def make_{i}():\n    def inner():\n        return base_{i}\n    return inner\n"
        "clo_{i} = make_{i}()",
        "clo_{i}()",
    ),
    "lambda": ("lam_{i} = lambda: base_{i}", "lam_{i}()"),
    "module": ("import chanmod\nchanmod.value_{i} = base_{i}", "chanmod.value_{i}"),
    "file": (
        "with open('chan_{i}.txt', 'w') as fh:\n    fh.write(str(base_{i}))",
        "int(open('chan_{i}.txt').read())",
    ),
    "environment": (
        "import os\nos.environ['NBR_CHAN_{i}'] = str(base_{i})",
        "int(__import__('os').environ['NBR_CHAN_{i}'])",
    ),
}
CHANNEL_FILES = {"chanmod.py": "BASE = 0\n"}


def node_kinds() -> set[str]:
    """The concrete statement and expression node types of the running Python."""
    found = set()
    for value in vars(ast).values():
        if not isinstance(value, type) or value in (ast.stmt, ast.expr):
            continue
        if issubclass(value, ast.Constant) and value is not ast.Constant:
            continue  # deprecated aliases (Num, Str, ...)
        if issubclass(value, ast.stmt | ast.expr):
            found.add(value.__name__)
    return found


def unclassified() -> set[str]:
    return node_kinds() - set(STATEMENTS) - set(EXPRESSIONS)


def templates() -> dict[str, str]:
    return {**STATEMENTS, **EXPRESSIONS}


def fill(template: str, value: str, i: int) -> str:
    return template.replace("{v}", value).replace("{i}", str(i))


def notebook_cells(channel: str) -> list[str]:
    """Parameters, then per node kind: the base value, the channel's producers, the consumer.
    A final cell lists every base value and what the consumers bound."""
    producers, reader = CHANNELS[channel]
    cells = ["n = 1\nm = 100"]
    for i, (_kind, template) in enumerate(sorted(templates().items())):
        source = "n" if i % 2 == 0 else "m"
        cells.append(f"base_{i} = {source} * 10 + {i}")
        if producers:
            cells.append(fill(producers, "", i))
        cells.append(fill(template, fill(reader, "", i), i))
    cells.append(
        "print(sorted((k, v) for k, v in globals().items() "
        "if k.startswith('base_') and isinstance(v, int)))"
    )
    return cells
