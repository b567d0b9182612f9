"""Code-level instrumentation for the 3.11 tracer: function bodies rewritten to record themselves.

A pure source -> code transformation (no process state): every ``def`` and ``async def`` of a
workflow file gets, at the top of its body, a check that records its first entry in the
current epoch and, in a ``finally``, a store of its last return::

    def f(x):               def f(x):
        return g(x)             if K not in __distea_e__: __distea_f__(K)
                becomes         try:
                                    return g(x)
                                finally:
                                    (__distea_e__.get(K) or __distea_f__(K))[1] = __distea_t__.clock

with ``K`` the function's report name, a constant, and both recording statements inside
``try: ... except NameError: pass`` (free on 3.11's happy path; the function still runs where
no tracer defined the names).

Because the *function's own code* records the call, every call is seen however the function
was reached: a reference taken before tracing started, a dict of callbacks,
``functools.partial``, a decorator's closure, a nested function. No wrapper frame is added (a
call costs one dict membership test and one store), tracebacks and line numbers are unchanged,
and ``sys.settrace`` is never used (on 3.11 any trace function puts the whole interpreter on its
slow path). The ``__distea_*__`` names resolve through :mod:`builtins`, so instrumented code
runs in any namespace (an imported module, the Snakefile's globals, a worker's ``exec``).
Lambdas, and functions compiled by a bytecode compiler (Numba), are left as written.

The key of a function is its report name, ``<module path>.<qualname>`` (qualnames as CPython
computes them: ``C.m``, ``f.<locals>.g``, ``f.<locals>.<listcomp>``).
"""

import ast
from types import CodeType
from typing import Any, Optional, Union

EPOCH = "__distea_e__"
"""The tracer's current epoch: key -> [first entry, last return] (a dict kept in place)."""
FIRST = "__distea_f__"
"""Records a first entry in the epoch; returns the new [first, last] span."""
TRACE = "__distea_t__"
"""The process trace (its ``clock`` is read on return)."""

_Function = Union[ast.FunctionDef, ast.AsyncFunctionDef]

COMPILING_DECORATORS = frozenset(
    {"jit", "njit", "vectorize", "guvectorize", "cfunc", "stencil", "generated_jit", "jitclass"}
)
"""Decorators that compile a function's *bytecode* (Numba): such functions (and the methods
of such classes) are left as written, or the compiler would meet the recording code. A query
naming one falls back to its module's body (conservative)."""


def _compiled_by_decorator(decorators: list[ast.expr]) -> bool:
    for decorator in decorators:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name in COMPILING_DECORATORS:
            return True
    return False


def _name(id_: str) -> ast.Name:
    return ast.Name(id=id_, ctx=ast.Load())


def _guarded(statement: ast.stmt) -> ast.stmt:
    """``try: statement except NameError: pass``: free on 3.11's happy path (zero-cost
    exceptions), and the function still runs where no tracer defined the names (a function
    shipped by value, e.g. by cloudpickle, to an untraced process)."""
    handler = ast.ExceptHandler(type=_name("NameError"), name=None, body=[ast.Pass()])
    return ast.Try(body=[statement], handlers=[handler], orelse=[], finalbody=[])


def _enter(key: str) -> ast.stmt:
    """``if key not in __distea_e__: __distea_f__(key)``, guarded"""
    test = ast.Compare(ast.Constant(key), [ast.NotIn()], [_name(EPOCH)])
    call = ast.Call(_name(FIRST), [ast.Constant(key)], [])
    return _guarded(ast.If(test, [ast.Expr(call)], []))


def _leave(key: str) -> ast.stmt:
    """``(__distea_e__.get(key) or __distea_f__(key))[1] = __distea_t__.clock``, guarded"""
    get = ast.Call(ast.Attribute(_name(EPOCH), "get", ast.Load()), [ast.Constant(key)], [])
    span = ast.BoolOp(ast.Or(), [get, ast.Call(_name(FIRST), [ast.Constant(key)], [])])
    target = ast.Subscript(span, ast.Constant(1), ast.Store())
    return _guarded(ast.Assign([target], ast.Attribute(_name(TRACE), "clock", ast.Load())))


def _is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )


class _Rewriter(ast.NodeTransformer):
    """Rewrites every function body, tracking qualnames the way the compiler does."""

    def __init__(self, module: str, keep: tuple[str, ...] = ()) -> None:
        self.module = module
        self.keep = keep
        """Prefixes of module-level functions left exactly as written (with their bodies)."""
        self.scope: list[str] = []
        """Qualname parts of the enclosing definitions; a function adds ``<locals>``."""
        self.keys: list[str] = []

    def _key(self, name: str) -> str:
        key = f"{self.module}.{'.'.join([*self.scope, name])}"
        self.keys.append(key)
        return key

    def _function(self, node: _Function) -> _Function:
        if not self.scope and node.name.startswith(self.keep or ("\0",)):
            return node
        if _compiled_by_decorator(node.decorator_list):
            return node
        key = self._key(node.name)
        # Decorators, defaults and annotations belong to the enclosing scope.
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.args = self.visit(node.args)
        if node.returns is not None:
            node.returns = self.visit(node.returns)
        self.scope += [node.name, "<locals>"]
        body = [self.visit(s) for s in node.body]
        self.scope[-2:] = []
        head: list[ast.stmt] = []
        if body and _is_docstring(body[0]):
            head, body = body[:1], body[1:]
        if not body:
            body = [ast.Pass()]
        anchor = body[0]
        enter, leave = _enter(key), _leave(key)
        wrapped = ast.Try(body=body, handlers=[], orelse=[], finalbody=[leave])
        for new in (enter, wrapped, leave):
            ast.copy_location(new, anchor)
        node.body = [*head, enter, wrapped]
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> Any:
        return self._function(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> Any:
        return self._function(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> Any:
        if _compiled_by_decorator(node.decorator_list):
            return node
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        node.bases = [self.visit(b) for b in node.bases]
        node.keywords = [self.visit(k) for k in node.keywords]
        self.scope.append(node.name)
        node.body = [self.visit(s) for s in node.body]
        self.scope.pop()
        return node

    def _comprehension(self, node: Any, name: str, fields: tuple[str, ...]) -> Any:
        # The first iterable is evaluated in the enclosing scope; the rest in the
        # comprehension's own scope, whose qualname part has no ``<locals>``.
        first = node.generators[0]
        first.iter = self.visit(first.iter)
        self.scope.append(name)
        first.target = self.visit(first.target)
        first.ifs = [self.visit(test) for test in first.ifs]
        node.generators[1:] = [self.visit(g) for g in node.generators[1:]]
        for field in fields:
            setattr(node, field, self.visit(getattr(node, field)))
        self.scope.pop()
        return node

    def visit_ListComp(self, node: ast.ListComp) -> Any:
        return self._comprehension(node, "<listcomp>", ("elt",))

    def visit_SetComp(self, node: ast.SetComp) -> Any:
        return self._comprehension(node, "<setcomp>", ("elt",))

    def visit_GeneratorExp(self, node: ast.GeneratorExp) -> Any:
        return self._comprehension(node, "<genexpr>", ("elt",))

    def visit_DictComp(self, node: ast.DictComp) -> Any:
        return self._comprehension(node, "<dictcomp>", ("key", "value"))

    def visit_Lambda(self, node: ast.Lambda) -> Any:
        # A lambda's body is one expression, where no guard against missing names fits, and
        # lambdas are what gets shipped by value to other processes (dask, Spark, joblib):
        # left as written. The functions it calls record; a query naming the lambda falls
        # back to its enclosing function or module body (conservative).
        node.args = self.visit(node.args)
        self.scope += ["<lambda>", "<locals>"]
        node.body = self.visit(node.body)
        self.scope[-2:] = []
        return node


def instrument(
    source: "str | bytes",
    filename: str,
    module: str,
    body: Optional[str] = None,
    keep: tuple[str, ...] = (),
) -> tuple[ast.Module, list[str]]:
    """The instrumented syntax tree of ``source`` and the keys of its functions.

    ``module`` is the report name of the file (``wflib.text``). With ``body`` (a key such as
    ``Snakefile.<module>``), the module body itself is recorded too, after any docstring and
    ``from __future__`` imports. Module-level functions whose names start with one of
    ``keep`` are left as written.
    """
    tree = ast.parse(source, filename, "exec")
    rewriter = _Rewriter(module, keep)
    tree = rewriter.visit(tree)
    if body is not None and tree.body:
        head: list[ast.stmt] = []
        rest = list(tree.body)
        while rest and (
            _is_docstring(rest[0])
            or (isinstance(rest[0], ast.ImportFrom) and rest[0].module == "__future__")
        ):
            head.append(rest.pop(0))
        if rest:
            anchor = rest[0]
            enter, leave = _enter(body), _leave(body)
            wrapped = ast.Try(body=rest, handlers=[], orelse=[], finalbody=[leave])
            for new in (enter, wrapped, leave):
                ast.copy_location(new, anchor)
            tree.body = [*head, enter, wrapped]
            rewriter.keys.append(body)
    ast.fix_missing_locations(tree)
    return tree, rewriter.keys


def instrument_tree(tree: ast.Module, module: str) -> ast.Module:
    """Rewrite the functions of an already parsed module (see :func:`instrument`)."""
    tree = _Rewriter(module).visit(tree)
    ast.fix_missing_locations(tree)
    return tree


def compile_instrumented(
    source: "str | bytes",
    filename: str,
    module: str,
    body: Optional[str] = None,
    keep: tuple[str, ...] = (),
) -> CodeType:
    """Compile ``source`` as :func:`instrument` rewrites it (same file name and line numbers)."""
    tree, _ = instrument(source, filename, module, body, keep)
    return compile(tree, filename, "exec", dont_inherit=True)


def _nested(code: CodeType) -> list[CodeType]:
    """The code objects nested in ``code``, depth first, in the order the compiler made them."""
    out: list[CodeType] = []
    for const in code.co_consts:
        if isinstance(const, CodeType):
            out.append(const)
            out.extend(_nested(const))
    return out


def code_pairs(plain: CodeType, instrumented: CodeType) -> dict[CodeType, CodeType]:
    """Each function code object of ``plain`` (a module compiled as Python does) -> its
    instrumented counterpart, or nothing when the two do not line up.

    Code objects compare by content, so a function object's ``__code__`` finds its
    counterpart only if it was compiled from this very source (an edited file maps nothing),
    and two lambdas on one line keep their own bodies.
    """
    before, after = _nested(plain), _nested(instrumented)
    if len(before) != len(after) or any(
        (a.co_qualname, a.co_firstlineno, a.co_freevars)
        != (b.co_qualname, b.co_firstlineno, b.co_freevars)
        for a, b in zip(before, after, strict=True)
    ):
        return {}
    return dict(zip(before, after, strict=True))


def module_name(relative_path: str) -> str:
    """Report name of a file from its path relative to the workflow root: ``wflib/text.py`` ->
    ``wflib.text``; ``Snakefile`` -> ``Snakefile``; ``rules/qc.smk`` -> ``rules.qc.smk``."""
    name = relative_path[:-3] if relative_path.endswith(".py") else relative_path
    return name.replace("\\", "/").replace("/", ".")
