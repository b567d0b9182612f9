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
import copy
import hashlib
import re
import symtable
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Optional

_OPAQUE_CALLS = {"exec", "eval", "globals", "locals", "vars", "dir", "breakpoint", "__import__"}
NAMESPACE_WIDE = frozenset(_OPAQUE_CALLS)
"""Builtins that read (or run code against) the whole namespace: a cell whose code reaches one
reads every name."""
READ_HOOK = "__nbrewind_ran__"
"""The builtin that instrumented notebook functions call on entry with the globals they may
read (:class:`ReadInstrumenter`)."""
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
    history: bool = False
    """It reads IPython's input/output history (``_``, ``Out``, ``In``, ``_5``...), which only
    a kernel that ran every earlier cell holds."""


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
    if _reaches_namespace(_without_shell_calls(tree)):
        walker.opaque = True
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
        history=any(is_history_name(n) for n in walker.reads | walker.loaded_anywhere),
    )


_HISTORY = re.compile(r"^(_{1,3}|_\d+|_i{1,3}|_i\d+|_oh|_ih|_dh|Out|In)$")
_NAMESPACE_HANDLES = frozenset({"get_ipython"})
"""Names whose use hands code the whole namespace (IPython's shell: ``user_ns``)."""


def is_history_name(name: str) -> bool:
    return _HISTORY.match(name) is not None


def _reaches_namespace(node: ast.AST) -> bool:
    """``import __main__``, ``sys.modules``, ``get_ipython()``: the whole namespace by
    another door than a builtin."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Import | ast.ImportFrom):
            names = [a.name for a in sub.names] + [getattr(sub, "module", None) or ""]
            if "__main__" in names:
                return True
        elif isinstance(sub, ast.Attribute) and sub.attr in ("modules", "user_ns"):
            return True
        elif isinstance(sub, ast.Name) and sub.id in _NAMESPACE_HANDLES:
            return True
    return False


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
            if isinstance(node, ast.ClassDef):
                # A class body runs now, and CPython reads its globals past any hook
                # (LOAD_NAME's fallback to globals): count them as the cell's reads.
                loads |= _class_body_globals(node) - local
            self._scan_body_flags(node)
            return
        if isinstance(node, ast.Lambda):
            # defaults are evaluated now, in this scope; the body when it is called
            for default in [*node.args.defaults, *(d for d in node.args.kw_defaults if d)]:
                self._collect(default, loads, stores, local)
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


def _without_shell_calls(tree: ast.Module) -> ast.Module:
    """The cell without IPython's own ``get_ipython().system(...)`` calls for ``!cmd`` (the
    transformer writes them; they do not hand the namespace to the cell's code)."""

    class Strip(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            func = node.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr in _SHELL_CALLS
                and isinstance(func.value, ast.Call)
                and isinstance(func.value.func, ast.Name)
                and func.value.func.id == "get_ipython"
            ):
                return ast.Constant(None)
            return self.generic_visit(node)

    return Strip().visit(copy.deepcopy(tree))  # type: ignore[no-any-return]


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


def _body_globals(
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda,
) -> set[str]:
    """Globals read (or declared ``global``) by a function's (or class's methods', or a
    lambda's) body and the scopes nested in it when it runs: symtable knows Python's scoping
    rules (parameters, locals, ``nonlocal``, ``global``, nested scopes)."""
    if isinstance(node, ast.Lambda):
        text = ast.unparse(ast.Expression(body=node))
    else:
        text = ast.unparse(ast.Module(body=[node], type_ignores=[]))
    table = symtable.symtable(text, "<cell>", "exec")
    found: set[str] = set()

    def walk(t: symtable.SymbolTable) -> None:
        for sym in t.get_symbols():
            if sym.is_global() and (sym.is_referenced() or sym.is_declared_global()):
                found.add(sym.get_name())
        for child in t.get_children():
            walk(child)

    for child in table.get_children():
        walk(child)
    return found


def _class_body_globals(node: ast.ClassDef) -> set[str]:
    """Globals a class body itself (not its methods) reads when the class is defined."""
    table = symtable.symtable(ast.unparse(ast.Module(body=[node], type_ignores=[])), "<c>", "exec")
    found: set[str] = set()
    for child in table.get_children():  # the class scope
        for sym in child.get_symbols():
            # A class body reads a name from globals until it assigns it (``LOW = LOW``):
            # every name it references counts.
            if sym.is_referenced():
                found.add(sym.get_name())
    return found


class ReadInstrumenter(ast.NodeTransformer):
    """IPython AST transformer: every function and lambda a cell defines calls
    ``__nbrewind_ran__(names)`` when it starts, with the globals its code (and the scopes
    nested in it) may read. The kernel then knows, at run time, which notebook code ran during
    a cell, whoever called it (the cell, a method through an instance, a library callback, a
    lambda in a dict), and loads or hashes those globals before the code reads them. One call
    per function call, not per lookup; line numbers, docstrings and outputs are unchanged.
    A nested function reports the names of its outermost enclosing function (a superset: its
    scopes, ``nonlocal`` included, only resolve there)."""

    def __init__(self) -> None:
        self._outer: list[frozenset[str]] = []

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return self._function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        return self._function(node)

    def _names(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> frozenset[str]:
        if self._outer:
            return self._outer[0]
        try:
            found = _body_globals(node)
        except SyntaxError:  # a scope symtable cannot resolve alone: every name it uses
            found = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        if _reaches_namespace(node) or any(is_history_name(n) for n in found):
            found.add("globals")  # reported as a whole-namespace read
        return frozenset(found - {READ_HOOK})

    def _visit_scope(
        self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
    ) -> frozenset[str]:
        """Instrument the scopes nested in ``node``; the names ``node`` reports."""
        names = self._names(node)
        self._outer.append(names)
        try:
            self.generic_visit(node)
        finally:
            self._outer.pop()
        return names

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
        names = self._visit_scope(node)
        if not names:
            return node
        first = 1 if _has_docstring(node.body) else 0
        anchor = node.body[0]
        call = ast.Expr(_hook_call(names))
        ast.copy_location(call, anchor)
        ast.fix_missing_locations(call)
        node.body.insert(first, call)
        return node

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        names = self._visit_scope(node)
        if not names:
            return node
        body = ast.Subscript(
            value=ast.Tuple(elts=[_hook_call(names), node.body], ctx=ast.Load()),
            slice=ast.Constant(1),
            ctx=ast.Load(),
        )
        node.body = ast.copy_location(body, node.body)
        ast.fix_missing_locations(node)
        return node


class SeenCode(dict[tuple[str, ...], None]):
    """The read hook's table: ``__nbrewind_ran__`` is this dict's bound ``__getitem__``, so a
    call for names already seen during the cell is one C-level lookup; only the first call
    for a set of names runs Python (``__missing__``, which calls :attr:`on_first`).
    :meth:`dict.clear` at each cell's start makes every set new again."""

    __slots__ = ("on_first",)

    def __init__(self) -> None:
        super().__init__()
        self.on_first: Optional[Callable[[tuple[str, ...]], None]] = None

    def __missing__(self, names: tuple[str, ...]) -> None:
        self[names] = None
        on_first = self.on_first
        if on_first is not None:
            on_first(names)


class CellInstrumenter:
    """What the kernel registers with IPython (``shell.ast_transformers``): instruments a copy
    of each cell's tree, and if that fails keeps the cell as written and says why in
    :attr:`failed` (IPython would otherwise drop a failing transformer for the session)."""

    def __init__(self) -> None:
        self.failed = ""

    def visit(self, node: ast.AST) -> ast.AST:
        self.failed = ""
        try:
            instrumented: ast.AST = ReadInstrumenter().visit(copy.deepcopy(node))
            return instrumented
        except Exception as e:  # noqa: BLE001 - the cell runs as written, marked unknowable
            self.failed = f"could not be instrumented ({type(e).__name__}: {e})"
            return node


def _hook_call(names: frozenset[str]) -> ast.Call:
    return ast.Call(
        func=ast.Name(id=READ_HOOK, ctx=ast.Load()),
        args=[ast.Constant(tuple(sorted(names)))],  # type: ignore[arg-type]  # a tuple const
        keywords=[],
    )


def _has_docstring(body: list[ast.stmt]) -> bool:
    return (
        len(body) >= 1
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    )
