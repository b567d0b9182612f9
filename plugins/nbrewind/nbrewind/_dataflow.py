"""Which module-level names a notebook cell reads and writes, from its source alone.

The analysis is deliberately conservative in one direction: it may report a read that does not
happen (which costs at most a re-execution), but it tries hard not to miss one. Writes found
here are only a first guess; the kernel confirms them at run time (rebinding and in-place
mutation), because an AST cannot tell ``df.head()`` from ``lst.pop()``.

Cells go through IPython's input transformer first, so ``!cmd`` and ``%magic`` lines parse.
Cells whose reads cannot be known (line or cell magics other than shell escapes, ``exec``,
``eval``, ``globals()``, ``import *``) are marked *opaque*; repeat re-executes them.
"""

import ast
import hashlib
import re
import symtable
from dataclasses import dataclass, field

_OPAQUE_CALLS = {"exec", "eval", "globals", "locals", "vars", "__import__"}
_MAGIC_CALLS = {"run_line_magic", "run_cell_magic"}
_SHELL_CALLS = {"system", "getoutput"}
_WORKFLOW_RE = re.compile(
    r"(^\s*!.*\bsnakemake\b)|(\bsnakemake\.api\b)|(^\s*from\s+snakemake\b)|(^\s*import\s+snakemake\b)"
    r"|(\bsubprocess\b[\s\S]*['\"]snakemake['\"])",
    re.MULTILINE,
)
_PATH_MAX = 1024


@dataclass(frozen=True)
class CellAnalysis:
    """What a cell's source says about its data flow.

    ``reads``: module-level names the cell may read before writing them (including globals
    read by functions and classes it defines and then calls, and by comprehensions).
    ``writes``: names it binds or deletes at module level. ``functions``: for each function or
    class the cell defines, the globals its body reads at call time (so a later cell that calls
    it depends on them). ``strings``: short string constants, candidate file paths.
    """

    reads: frozenset[str]
    writes: frozenset[str]
    deleted: frozenset[str] = frozenset()
    functions: dict[str, frozenset[str]] = field(default_factory=dict)
    strings: frozenset[str] = frozenset()
    opaque: bool = False
    workflow: bool = False
    syntax_error: bool = False


def source_hash(source: str) -> str:
    """The identity of a cell's code: trailing whitespace and blank lines do not count."""
    lines = [line.rstrip() for line in source.strip().splitlines()]
    return "sha256:" + hashlib.sha256("\n".join(lines).encode()).hexdigest()


def transform(source: str) -> str:
    """IPython syntax (``!``, ``%``, ``%%``) to plain Python, as the kernel would run it."""
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager().transform_cell(source)  # type: ignore[no-untyped-call]


def analyse_cell(source: str) -> CellAnalysis:
    """Analyse one cell's source (IPython syntax allowed)."""
    workflow = bool(_WORKFLOW_RE.search(source))
    try:
        tree = ast.parse(transform(source))
    except SyntaxError:
        # It will fail in the kernel too; nothing it could read is knowable.
        return CellAnalysis(frozenset(), frozenset(), opaque=True, syntax_error=True)
    walker = _CellWalker()
    for stmt in tree.body:
        walker.statement(stmt)
    reads = set(walker.reads)
    # A function defined in this cell and called in it reads its globals now.
    for name in list(walker.loaded_anywhere):
        reads |= walker.functions.get(name, frozenset()) - walker.writes
    return CellAnalysis(
        reads=frozenset(reads),
        writes=frozenset(walker.writes),
        deleted=frozenset(walker.deleted),
        functions={k: frozenset(v) for k, v in walker.functions.items()},
        strings=frozenset(walker.strings),
        opaque=walker.opaque,
        workflow=workflow,
    )


def reads_closure(reads: frozenset[str], functions: dict[str, frozenset[str]]) -> frozenset[str]:
    """``reads`` plus, transitively, the globals read by the notebook functions among them."""
    seen = set(reads)
    todo = list(reads)
    while todo:
        for name in functions.get(todo.pop(), ()):
            if name not in seen:
                seen.add(name)
                todo.append(name)
    return frozenset(seen)


class _CellWalker:
    """Statement-by-statement def/use at module scope."""

    def __init__(self) -> None:
        self.defined: set[str] = set()
        self.reads: set[str] = set()
        self.writes: set[str] = set()
        self.deleted: set[str] = set()
        self.functions: dict[str, set[str]] = {}
        self.strings: set[str] = set()
        self.loaded_anywhere: set[str] = set()
        self.opaque = False

    def statement(self, stmt: ast.stmt) -> None:
        loads: set[str] = set()
        stores: set[str] = set()
        self._collect(stmt, loads, stores, set())
        if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
            loads.add(stmt.target.id)
        self.reads |= loads - self.defined
        self.loaded_anywhere |= loads
        self.defined |= stores
        self.writes |= stores

    def _collect(self, node: ast.AST, loads: set[str], stores: set[str], local: set[str]) -> None:
        """Names loaded and stored at module scope by ``node``; ``local`` are names bound by an
        enclosing comprehension or lambda (not module names)."""
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            for deco in node.decorator_list:
                self._collect(deco, loads, stores, local)
            if isinstance(node, ast.ClassDef):
                for base in [*node.bases, *(k.value for k in node.keywords)]:
                    self._collect(base, loads, stores, local)
            else:
                for default in [*node.args.defaults, *(d for d in node.args.kw_defaults if d)]:
                    self._collect(default, loads, stores, local)
            stores.add(node.name)
            self.functions[node.name] = _body_globals(node)
            self._scan_body_flags(node)
            return
        if isinstance(node, ast.Lambda):
            args = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
            self._collect(node.body, loads, stores, local | args)
            return
        if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            targets = {
                n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)
            }
            for child in ast.iter_child_nodes(node):
                self._collect(child, loads, stores, local | targets)
            return
        if isinstance(node, ast.Name):
            if node.id in local:
                return
            if isinstance(node.ctx, ast.Load):
                loads.add(node.id)
            elif isinstance(node.ctx, ast.Store):
                stores.add(node.id)
            else:  # Del
                stores.add(node.id)
                self.deleted.add(node.id)
            return
        if isinstance(node, ast.Import | ast.ImportFrom):
            for alias in node.names:
                if alias.name == "*":
                    self.opaque = True
                    continue
                stores.add(alias.asname or alias.name.split(".")[0])
            return
        if isinstance(node, ast.ExceptHandler) and node.name:
            stores.add(node.name)
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if 0 < len(node.value) <= _PATH_MAX and "\n" not in node.value:
                self.strings.add(node.value)
        if isinstance(node, ast.Call):
            self._check_call(node)
            loads |= _shell_expansions(node) - local
        for child in ast.iter_child_nodes(node):
            self._collect(child, loads, stores, local)

    def _check_call(self, call: ast.Call) -> None:
        func = call.func
        if isinstance(func, ast.Name) and func.id in _OPAQUE_CALLS:
            self.opaque = True
        elif isinstance(func, ast.Attribute) and func.attr in _MAGIC_CALLS:
            self.opaque = True

    def _scan_body_flags(self, node: ast.AST) -> None:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Call):
                self._check_call(sub)
            elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                if 0 < len(sub.value) <= _PATH_MAX and "\n" not in sub.value:
                    self.strings.add(sub.value)


_EXPANSION_RE = re.compile(r"\{([^{}]+)\}|\$(\w+)")


def _shell_expansions(call: ast.Call) -> set[str]:
    """Names a shell escape reads through IPython's expansion: ``!cmd {expr} $name``."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr in _SHELL_CALLS and call.args):
        return set()
    arg = call.args[0]
    if not (isinstance(arg, ast.Constant) and isinstance(arg.value, str)):
        return set()
    names: set[str] = set()
    for braces, dollar in _EXPANSION_RE.findall(arg.value):
        if dollar:
            names.add(dollar)
            continue
        try:
            expr = ast.parse(braces.strip(), mode="eval")
        except SyntaxError:
            continue
        names |= {n.id for n in ast.walk(expr) if isinstance(n, ast.Name)}
    return names


def _body_globals(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> set[str]:
    """Globals read by a function's (or class's methods') body when it runs: symtable knows
    Python's scoping rules (parameters, locals, ``nonlocal``, ``global``, nested scopes)."""
    shell = ast.Module(body=[node], type_ignores=[])
    table = symtable.symtable(ast.unparse(shell), "<cell>", "exec")
    found: set[str] = set()

    def walk(t: symtable.SymbolTable) -> None:
        for sym in t.get_symbols():
            if sym.is_global() and sym.is_referenced():
                found.add(sym.get_name())
        for child in t.get_children():
            walk(child)

    for child in table.get_children():
        walk(child)
    return found
