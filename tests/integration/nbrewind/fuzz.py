"""The differential fuzzer: generator and checker (for the test and `bench/nbrewind_fuzz.py`).

A *case* is a small random notebook program built from cell templates (aliases, in-place and
nested mutation, global RNG use, file I/O with computed paths, functions and classes,
generators, a parameter), plus a random edit (a changed parameter, a changed constant, an added
line, an inserted cell, or nothing). Kernel start-up costs seconds, so several cases share one
notebook: each case has its own names (prefix ``c<k>_``), its own directory and its own
parameter, and the notebook is run as one; they still interact through the global random
generators, which the notebook seeds once at the top. The final cell prints the whole
namespace (values, and which names are the same object) and every file the cases wrote.

:func:`run_batch` audits a notebook, applies the edits, repeats it with ``nbrewind-repeat``
and runs the edited notebook from the same files with the stock ``python3`` kernel, then
compares every cell's outputs; :class:`BatchResult` says which cases diverged and how many
re-executions were unnecessary (the cell's source, outputs and written values all came out as
in the audit).
"""

import random
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

IMPORTS = (
    "import os\nimport random\nfrom pathlib import Path\n\nimport numpy as np\n\n"
    "random.seed(7)\nnp.random.seed(7)"
)
FINAL = """import json as _json
def _show(v):
    if isinstance(v, (int, float, str, list, dict, tuple, type(None))):
        return repr(v)
    if hasattr(v, "__dict__") and not callable(v):
        return type(v).__name__ + repr(sorted(vars(v).items()))
    return type(v).__name__
_names = sorted(n for n in globals() if n.startswith("c") and "_" in n and n[1].isdigit())
for _n in _names:
    print(_n, "=", _show(globals()[_n]))
_same = {}
for _n in _names:
    if isinstance(globals()[_n], (list, dict)) or hasattr(globals()[_n], "__dict__"):
        _same.setdefault(id(globals()[_n]), []).append(_n)
print("same objects:", sorted(v for v in _same.values() if len(v) > 1))
for _p in sorted(Path(".").glob("c*_dir/*")):
    print(_p, _p.read_text())"""


@dataclass
class Case:
    """One generated program: its cells (sources), parameter, and edit."""

    k: int
    cells: list[str]
    param: int
    new_param: int
    edit: str
    edited_cells: list[str]


class _Program:
    """Cell templates over a small typed model of the names defined so far."""

    def __init__(self, rng: random.Random, k: int) -> None:
        self.rng, self.k = rng, k
        self.p = f"c{k}_p"
        self.dicts: list[str] = []
        self.lists: list[str] = []
        self.ints: list[str] = [self.p]
        self.gens: list[str] = []
        self.objs: list[str] = []
        self.funcs: list[str] = []
        self.cls = ""
        self.n = 0

    def name(self, kind: str) -> str:
        self.n += 1
        return f"c{self.k}_{kind}{self.n}"

    def num(self) -> int:
        return self.rng.randint(1, 9)

    def expr(self) -> str:
        r = self.rng
        base = r.choice(self.ints)
        return r.choice([f"{base} * {self.num()}", f"{base} + {self.num()}", base])

    def cell(self) -> str:
        r = self.rng
        options: list[Callable[[], str]] = [self.new_dict, self.new_list, self.new_int]
        if self.dicts:
            options += [self.alias, self.nested, self.mutate_dict, self.show_dict]
        if self.lists:
            options += [self.alias_list, self.mutate_list]
        options += [self.rng_use, self.rng_use, self.write_file, self.read_files]
        options += [self.define_function, self.define_class, self.new_generator]
        if self.funcs:
            options.append(self.call_function)
        if self.objs:
            options.append(self.use_object)
        if self.gens:
            options += [self.advance_generator, self.advance_generator]
        return r.choice(options)()

    # -- templates ----------------------------------------------------------------------------

    def new_dict(self) -> str:
        d = self.name("d")
        self.dicts.append(d)
        return f'{d} = {{"a": {self.expr()}, "n": {{"x": {self.num()}}}}}'

    def new_list(self) -> str:
        v = self.name("l")
        self.lists.append(v)
        return f"{v} = [{self.expr()}, {self.num()}]"

    def new_int(self) -> str:
        v, e = self.name("i"), self.expr()
        self.ints.append(v)
        return f"{v} = {e}"

    def alias(self) -> str:
        v = self.name("d")
        src = self.rng.choice(self.dicts)
        self.dicts.append(v)
        return f"{v} = {src}"

    def alias_list(self) -> str:
        v = self.name("l")
        src = self.rng.choice(self.lists)
        self.lists.append(v)
        return f"{v} = {src}"

    def nested(self) -> str:
        v = self.name("d")
        src = self.rng.choice(self.dicts)
        self.dicts.append(v)
        return f'{v} = {src}.setdefault("n", {{}})'

    def mutate_dict(self) -> str:
        d = self.rng.choice(self.dicts)
        return self.rng.choice(
            [
                f'{d}["a"] = {d}.get("a", 0) + {self.expr()}',
                f'{d}.update({{"u": {self.expr()}}})',
                f'{d}.setdefault("n", {{}})["x"] = {self.expr()}',
            ]
        )

    def mutate_list(self) -> str:
        v = self.rng.choice(self.lists)
        return self.rng.choice([f"{v}.append({self.expr()})", f"{v}[0] = {self.expr()}"])

    def show_dict(self) -> str:
        return f"print({self.rng.choice(self.dicts)})"

    def rng_use(self) -> str:
        v, e = self.name("i"), self.expr()
        self.ints.append(v)
        return self.rng.choice(
            [
                f"{v} = random.randint(0, 100) + {e}\nprint({v})",
                f"{v} = int(np.random.randint(0, 100)) + {e}\nprint({v})",
                f"random.seed({e})\n{v} = random.randint(0, 9)",
                f"np.random.seed({self.num()})\n{v} = int(np.random.rand() * 100)\nprint({v})",
            ]
        )

    def write_file(self) -> str:
        d = f'f"c{self.k}_dir"'
        return self.rng.choice(
            [
                f'os.makedirs({d}, exist_ok=True)\nwith open(os.path.join({d}, "f%d.txt" % '
                f'({self.expr()} % 3)), "w") as fh:\n    fh.write(str({self.expr()}))',
                f'Path({d}).mkdir(exist_ok=True)\n(Path({d}) / f"g{{{self.expr()} % 2}}.txt")'
                f".write_text(str({self.expr()}))",
                f"for q in sorted(Path({d}).glob('*.txt'))[:1]:\n    q.unlink()",
            ]
        )

    def read_files(self) -> str:
        v = self.name("i")
        self.ints.append(v)
        d = f'"c{self.k}_dir"'
        return (
            f"{v} = sum(int(q.read_text()) for q in sorted(Path({d}).glob('*.txt')))\n"
            f"print(sorted(q.name for q in Path({d}).glob('*.txt')), {v})"
        )

    def define_function(self) -> str:
        f = self.name("f")
        self.funcs.append(f)
        g = self.rng.choice(self.ints)
        return f"def {f}(x):\n    return x * {self.num()} + {g}"

    def call_function(self) -> str:
        v, f, e = self.name("i"), self.rng.choice(self.funcs), self.expr()
        self.ints.append(v)
        return f"{v} = {f}({e})\nprint({v})"

    def define_class(self) -> str:
        if not self.cls:
            self.cls = f"C{self.k}"
            head = (
                f"class {self.cls}:\n    def __init__(self, v):\n        self.v = v\n"
                "    def bump(self):\n        self.v += 1\n        return self.v\n"
            )
        else:
            head = ""
        o = self.name("o")
        self.objs.append(o)
        return f"{head}{o} = {self.cls}({self.expr()})"

    def use_object(self) -> str:
        o = self.rng.choice(self.objs)
        return self.rng.choice([f"print({o}.bump())", f"{o}.v = {self.expr()}"])

    def new_generator(self) -> str:
        g = self.name("g")
        self.gens.append(g)
        return f"{g} = (i * {self.num()} for i in range(1000))"

    def advance_generator(self) -> str:
        v = self.name("i")
        g = self.rng.choice(self.gens)
        self.ints.append(v)
        return f"{v} = next({g})\nprint('{v} =', {v})"


def make_case(rng: random.Random, k: int) -> Case:
    program = _Program(rng, k)
    cells = [program.cell() for _ in range(rng.randint(3, 7))]
    param = rng.randint(1, 5)
    edit = rng.choice(["parameter", "parameter", "constant", "line", "insert", "none"])
    new_param, edited = param, list(cells)
    if edit == "parameter":
        new_param = param + rng.randint(1, 3)
    elif edit == "constant":
        i = rng.randrange(len(cells))
        src = cells[i]
        digits = [
            j
            for j, ch in enumerate(src)
            if ch.isdigit() and (j == 0 or not (src[j - 1].isalnum() or src[j - 1] == "_"))
        ]
        if digits:
            j = rng.choice(digits)
            edited[i] = cells[i][:j] + str((int(cells[i][j]) + 1) % 10) + cells[i][j + 1 :]
    elif edit == "line":
        i = rng.randrange(len(cells))
        edited[i] = cells[i] + f"\nprint('edited {k}')"
    elif edit == "insert":
        edited.append(program.cell())
    return Case(k, cells, param, new_param, edit, edited)


def notebook(cases: list[Case], edited: bool) -> Any:
    nb = nbformat.v4.new_notebook()
    params = nbformat.v4.new_code_cell("\n".join(f"c{c.k}_p = {c.param}" for c in cases))
    params.metadata["tags"] = ["parameters"]
    nb.cells.append(params)
    nb.cells.append(nbformat.v4.new_code_cell(IMPORTS))
    for case in cases:
        nb.cells.append(nbformat.v4.new_markdown_cell(f"case {case.k}: edit {case.edit}"))
        for source in case.edited_cells if edited else case.cells:
            cell = nbformat.v4.new_code_cell(source)
            cell.metadata["case"] = case.k
            nb.cells.append(cell)
    nb.cells.append(nbformat.v4.new_code_cell(FINAL))
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    return nb


def _append_inserted(cells: list[Any], case: Case) -> None:
    if len(case.edited_cells) > len(case.cells):
        cell = nbformat.v4.new_code_cell(case.edited_cells[-1])
        cell.metadata["case"] = case.k
        cells.append(cell)


@dataclass
class BatchResult:
    cases: int
    divergent_cases: list[int] = field(default_factory=list)
    final_diverged: bool = False
    executed: int = 0
    restored: int = 0
    unnecessary: int = 0
    details: list[str] = field(default_factory=list)


def cell_outputs(cell: Any, drop: tuple[str, ...] = ("execution_count", "metadata")) -> list[Any]:
    """A cell's outputs without the keys in ``drop``, consecutive chunks of one stream joined.

    How a kernel splits a stream into messages depends on timing, not on what the cell
    printed: ipykernel flushes its buffer 0.2 s after the first write, so under load
    ``print(x)`` may arrive as ``"x"`` and ``"\\n"`` from the stock kernel and as one chunk from
    the other. Jupyter renders both the same; comparing the joined text is the contract.
    """
    found: list[dict[str, Any]] = []
    for o in cell.get("outputs", []):
        o = {k: v for k, v in o.items() if k not in drop}
        last = found[-1] if found else None
        if o.get("output_type") == "stream" and last and last.get("name") == o.get("name"):
            last["text"] += o["text"]
        else:
            found.append(dict(o))
    return found


def papermill_execute(
    source: Path, dest: Path, kernel: str, engine: Any = "nbrewind", cwd: Any = None, **params: Any
) -> Any:
    """One quiet papermill run of ``source`` into ``dest`` (how the fuzzer runs notebooks)."""
    import papermill

    return papermill.execute_notebook(
        str(source),
        str(dest),
        parameters=params,
        kernel_name=kernel,
        engine_name=engine,
        progress_bar=False,
        request_save_on_cell_execute=False,
        cwd=str(cwd) if cwd else None,
    )


def run_batch(
    seed: int, n_cases: int, wd: Path, execute: Callable[..., Any] = papermill_execute
) -> BatchResult:
    """Audit, edit, repeat and compare with a stock run, for ``n_cases`` cases from ``seed``."""
    rng = random.Random(seed)
    cases = [make_case(rng, k) for k in range(n_cases)]
    run = wd / "run"
    run.mkdir(parents=True)
    nbformat.write(notebook(cases, edited=False), str(run / "in.ipynb"))
    old = {f"c{c.k}_p": c.param for c in cases}
    new = {f"c{c.k}_p": c.new_param for c in cases}
    audit = execute(run / "in.ipynb", run / "out.ipynb", "nbrewind-audit", cwd=run, **old)
    # The user's edit, made in the audited notebook (records and outputs kept).
    edited_nb = nbformat.read(str(run / "out.ipynb"), as_version=4)
    by_case = {c.k: c for c in cases}
    cells, position = [], {c.k: 0 for c in cases}
    for cell in edited_nb.cells:
        k = cell.metadata.get("case")
        if k is None:
            if cells and cells[-1].metadata.get("case") is not None:
                _append_inserted(cells, by_case[cells[-1].metadata["case"]])
            cells.append(cell)
            continue
        case = by_case[k]
        if cell.source != case.edited_cells[position[k]]:
            cell.source = case.edited_cells[position[k]]
        position[k] += 1
        cells.append(cell)
    edited_nb.cells = cells
    nbformat.write(edited_nb, str(run / "edited.ipynb"))
    stock_dir = wd / "stock"
    shutil.copytree(run, stock_dir, ignore=shutil.ignore_patterns(".nbrewind"))
    again = execute(run / "edited.ipynb", run / "again.ipynb", "nbrewind-repeat", cwd=run, **new)
    stock = execute(
        stock_dir / "edited.ipynb", stock_dir / "stock.ipynb", "python3", None, stock_dir, **new
    )
    result = BatchResult(cases=n_cases)
    audit_records = {
        c.source: c.metadata.get("nbrewind", {}) for c in audit.cells if c.cell_type == "code"
    }
    mine = [c for c in again.cells if c.cell_type == "code"]
    theirs = [c for c in stock.cells if c.cell_type == "code"]
    assert len(mine) == len(theirs)
    for a, b in zip(mine, theirs, strict=True):
        case = a.metadata.get("case")
        repeated, fresh = cell_outputs(a), cell_outputs(b)
        if repeated != fresh:
            if case is None:
                result.final_diverged = "injected-parameters" not in a.metadata.get("tags", [])
            elif case not in result.divergent_cases:
                result.divergent_cases.append(case)
            result.details.append(
                f"case {case} cell {a.source!r}: repeat {repeated} != stock {fresh}"
            )
        record = a.metadata.get("nbrewind", {})
        if case is None:
            continue
        if record.get("status") == "executed":
            result.executed += 1
            before = audit_records.get(a.source)
            if before and _same_results(before, record):
                result.unnecessary += 1
        elif record.get("status") == "restored":
            result.restored += 1
    return result


def _same_results(before: dict[str, Any], after: dict[str, Any]) -> bool:
    """A re-execution whose source, outputs and written values all came out as in the audit."""
    hashes = {n: w.get("hash") for n, w in after.get("writes", {}).items()}
    old = {n: w.get("hash") for n, w in before.get("writes", {}).items()}
    return (
        before.get("source") == after.get("source")
        and before.get("outputs") == after.get("outputs")
        and hashes == old
        and before.get("files_written") == after.get("files_written")
    )
