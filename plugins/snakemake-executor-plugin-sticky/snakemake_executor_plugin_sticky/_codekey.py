"""Digests of code as it can run, for provenance keys (issue 26).

A ``run:`` block is a function compiled from the Snakefile; what it does depends on its own
code and on everything it reaches: the Snakefile's functions and classes it calls (and what
those call), the globals they read, the values in their closures and defaults, and the
workflow-local modules and packages they use. :class:`CodeFollower` follows all of it:

* a **function** by its code object (bytecode, constants, names, nested code objects; not its
  file name or line numbers, which differ between sites and comment edits), its defaults,
  keyword defaults and closure cells, and, for every global name its code (or code nested in
  it: lambdas, comprehensions, inner functions, class bodies) loads, that global's value;
* a **class** defined in the workflow by its bases and every member of its ``__dict__``;
* a **module or package** of the workflow (its file lies inside one of the workflow's
  folders and outside the Python installation) by the content of every ``.py`` file of its
  top-level package (a flat module: its file); an installed one by its name (the software
  environment's business, like the conda env file);
* builtins and installed functions and classes by their qualified name (plus what the
  workflow hung on them: a singledispatch registry, ``__wrapped__``); ``random`` and
  ``numpy.random`` with their global generator's state, where code draws from them;
* ``functools.partial`` by its function, arguments and keywords; a bound method by its
  function and the object it is bound to; a function's own attributes;
* code that reaches names it computes (``globals()``, ``vars()``, ``eval``/``exec``,
  ``sys.modules[...]``, ``importlib.import_module``): the whole namespace, every loaded
  workflow module, and for code run from text, or a module loaded by a computed name or
  from a file path, every workflow ``.py`` file;
* an ``import`` of a module not loaded yet: where Python will find it on ``sys.path`` (a
  workflow module by its file and, in turn, what it imports); found nowhere (the code puts
  its folder on ``sys.path`` first), every workflow ``.py`` file;
* any other value by its stable text form (``stable_repr``: containers in order, objects by
  what pickle rebuilds them from), or, where that fails inside, by walking that rebuild
  description here, following code on the way.

What it cannot represent (an object whose ``repr`` shows an address, a generator, a file)
raises :class:`Unfollowable` naming the path to it (``helper -> CACHE -> <Opt object>``):
the caller makes the job uncacheable and says so. Nothing is left out silently.
"""

import ast
import copyreg
import dis
import functools
import hashlib
import importlib.machinery
import os
import sys
import types
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Optional

NAME_OPS: dict[str, str] = {
    "LOAD_GLOBAL": "global",
    "LOAD_NAME": "global",
    "STORE_GLOBAL": "global",
    "DELETE_GLOBAL": "global",
    "STORE_NAME": "global",
    "DELETE_NAME": "global",
    "LOAD_FROM_DICT_OR_GLOBALS": "global",
    "IMPORT_NAME": "import",
    "IMPORT_FROM": "attribute",
    "LOAD_ATTR": "attribute",
    "LOAD_METHOD": "attribute",
    "LOAD_SUPER_ATTR": "attribute",
    "STORE_ATTR": "attribute",
    "DELETE_ATTR": "attribute",
}
"""Every opcode whose argument is a name (``dis.hasname``), by what the name is: a global of
the function's module (followed), a module imported at run time (followed: a workflow-local
one by its files), or an attribute of some object (that object is followed instead). A
Python version with a new such opcode fails ``test_codekey`` until it is classified here."""

_SKIPPED_CLASS_MEMBERS = frozenset({"__dict__", "__weakref__", "__module__"})

SNAKEFILE_NAMESPACE = "snakemake.workflow"
"""The ``__name__`` of the main Snakefile's globals (Snakemake runs it in that module's
namespace), so of the classes it defines."""


class Unfollowable(ValueError):
    """Some code or value a job can reach has no stable digest (the message says which)."""


def sha256_hex(data: "str | bytes") -> str:
    """The sha256 of text (UTF-8) or bytes, as hex: every digest of the key is one."""
    return hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


_sha = sha256_hex


def reduce_parts(value: Any, error: type[Exception] = ValueError) -> tuple[str, list[Any]]:
    """How pickle would rebuild ``value``: the qualified name of the callable that rebuilds
    it, and its arguments and state (list and dict items as lists); ``error`` if pickle
    cannot describe it (a lock, an open file, a generator)."""
    try:
        reducer = copyreg.dispatch_table.get(type(value))  # as pickle: re.Pattern, complex
        reduced = reducer(value) if reducer is not None else value.__reduce_ex__(4)
    except Exception as e:
        raise error(f"{type(value).__qualname__} value cannot be described ({e})") from None
    if isinstance(reduced, str):  # a module-level object, by name
        return f"{type(value).__module__}.{reduced}", []
    if not isinstance(reduced, tuple) or not reduced:
        raise error(f"{type(value).__qualname__} value reduces to {type(reduced).__name__}")
    rebuild = reduced[0]
    name = (
        f"{getattr(rebuild, '__module__', None)}."
        f"{getattr(rebuild, '__qualname__', type(rebuild).__qualname__)}"
    )
    parts: list[Any] = []
    for part in reduced[1:]:
        if part is not None and not isinstance(part, (tuple, list, dict, str, bytes)):
            try:
                part = list(part)  # listitems / dictitems iterators
            except TypeError:
                pass
        parts.append(part)
    return name, parts


def code_names(code: types.CodeType) -> tuple[set[str], set[str]]:
    """The names ``code`` and the code objects nested in it (lambdas, comprehensions, inner
    functions and classes) look up as globals, and the modules they import."""
    names, imports, _ = code_names_and_attributes(code)
    return names, imports


def code_names_and_attributes(code: types.CodeType) -> tuple[set[str], set[str], set[str]]:
    """:func:`code_names`, and the attribute names the code reads or writes."""
    names: set[str] = set()
    imports: set[str] = set()
    attributes: set[str] = set()
    pending = [code]
    while pending:
        co = pending.pop()
        for ins in dis.get_instructions(co):
            kind = NAME_OPS.get(ins.opname)
            if not isinstance(ins.argval, str):
                continue
            if kind == "global":
                names.add(ins.argval)
            elif kind == "import":
                imports.add(ins.argval)
            elif kind == "attribute":
                attributes.add(ins.argval)
        pending.extend(c for c in co.co_consts if isinstance(c, types.CodeType))
    return names, imports, attributes


def _installed_roots() -> tuple[str, ...]:
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    return tuple(os.path.abspath(r).rstrip(os.sep) + os.sep for r in roots if r)


def files_under(folder: Path, suffix: str = "", skip_hidden: bool = False) -> Iterator[Path]:
    """The files under ``folder`` whose names end with ``suffix``, in a fixed order, never
    inside ``__pycache__`` (nor hidden folders, with ``skip_hidden``)."""
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(
            d for d in dirs if d != "__pycache__" and not (skip_hidden and d.startswith("."))
        )
        for name in sorted(files):
            if name.endswith(suffix):
                yield Path(root) / name


def _found_on_sys_path(top: str) -> Optional[tuple[str, list[str]]]:
    """Where ``import TOP`` would load a top-level module from in this process, without
    importing it: ("package", its folders) or ("module", [its file]); None where the path
    finder finds nothing on disk (a built-in, a frozen or a missing module)."""
    try:
        spec = importlib.machinery.PathFinder.find_spec(top, sys.path)
    except (ImportError, ValueError, OSError):
        return None
    if spec is None:
        return None
    locations = [p for p in spec.submodule_search_locations or [] if os.path.isdir(p)]
    if locations:
        return "package", locations
    if spec.origin and os.path.isfile(spec.origin):
        return "module", [spec.origin]
    return None


def source_imports(tree: ast.AST) -> tuple[set[str], bool]:
    """What a Python source imports, read statically: the top-level names of its absolute
    ``import`` statements, and whether it also imports by a name, path or text computed at
    run time (a :data:`LOADERS` call, ``exec``/``eval``/``compile``/``__import__``, any use
    of ``sys.path``), which no reading can name."""
    names: set[str] = set()
    dynamic = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
        elif not dynamic and (
            isinstance(node, ast.Call)
            and _call_name(node) in LOADERS | DYNAMIC_CODE
            or _is_sys_path(node)
        ):
            dynamic = True
    return names, dynamic


def _call_name(call: ast.Call) -> str:
    """The called name; a builtin of :data:`DYNAMIC_CODE` only as the builtin (``eval(text)``),
    not as a method of some object (``model.eval()``, ``re.compile(...)``)."""
    func = call.func
    if isinstance(func, ast.Attribute):
        return "" if func.attr in DYNAMIC_CODE else func.attr
    return getattr(func, "id", "")


def _is_sys_path(node: ast.AST) -> bool:
    """``sys.path`` (changed by the code: ``sys.path.insert(0, "lib")``, then imports from
    a folder no static reading can name)."""
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "path"
        and isinstance(node.value, ast.Name)
        and node.value.id == "sys"
    )


def python_tree_digest(folder: Path) -> str:
    """The digest of every ``.py`` file under ``folder`` (relative path and content)."""
    parts = [
        f"{full.relative_to(folder)}={_sha(full.read_bytes())}"
        for full in files_under(folder, ".py", skip_hidden=True)
    ]
    return _sha("\n".join(parts))


class CodeFollower:
    """Digests of functions, classes, modules and values, following everything they reach.

    ``local_dirs``: the workflow's folders (its base directory, the working directory); a
    module whose file lies inside one (and not inside the Python installation) is the
    workflow's own. ``value_text``: the stable text form of plain values (raises
    ``ValueError`` when there is none). ``known``: objects with a fixed text, by ``id``
    (Snakemake's objects whose effect other key components cover). Digests are memoised per
    object for the follower's life (one run: the Snakefile's code does not change)."""

    def __init__(
        self,
        local_dirs: Iterable["str | Path"],
        value_text: Callable[[Any], str],
        known: Optional[dict[int, str]] = None,
    ) -> None:
        installed = _installed_roots()
        self._local = tuple(
            d
            for d in (os.path.abspath(p).rstrip(os.sep) + os.sep for p in local_dirs)
            if not any(d.startswith(r) for r in installed)
        )
        self._installed = installed
        self._value_text = value_text
        self._known = dict(known or {})
        self._memo: dict[int, str] = {}
        self._keep: list[Any] = []  # memoised objects stay alive: their ids stay theirs
        self._active: set[int] = set()
        self._local_python_digest: Optional[str] = None
        self._walking: set[int] = set()
        self._files: dict[str, str] = {}  # workflow modules not imported yet, by file

    # ---- public -----------------------------------------------------------------------------

    def digest(self, obj: Any, path: str) -> str:
        """The digest of ``obj`` (reached as ``path``, for messages); :class:`Unfollowable`
        if some part of it has none."""
        key = id(obj)
        if key in self._known:
            return self._known[key]
        if key in self._memo:
            return self._memo[key]
        if key in self._active:  # recursion (a function calling itself): named, not followed
            return _sha(f"cycle:{getattr(obj, '__qualname__', type(obj).__name__)}")
        self._active.add(key)
        try:
            found = self._compute(obj, path)
        finally:
            self._active.discard(key)
        if not isinstance(obj, (int, float, str, bytes, bool, type(None))):
            self._memo[key] = found
            self._keep.append(obj)
        return found

    def is_local_file(self, filename: Optional[str]) -> bool:
        if not filename:
            return False
        full = os.path.abspath(filename)
        return any(full.startswith(d) for d in self._local) and not any(
            full.startswith(r) for r in self._installed
        )

    def module_digest(self, module: types.ModuleType) -> str:
        """A workflow-local module by its top-level package's ``.py`` files (a flat module
        by its own file); an installed or built-in one by its name."""
        top = sys.modules.get(module.__name__.split(".")[0], module)
        filename = getattr(top, "__file__", None) or getattr(module, "__file__", None)
        paths = list(getattr(top, "__path__", None) or [])
        if paths and self.is_local_file(paths[0] + os.sep):
            tree = python_tree_digest(Path(paths[0]))
            return _sha(f"package:{top.__name__}:{tree}:{self._module_state(module)}")
        if self.is_local_file(filename):
            assert filename is not None
            source = _sha(Path(filename).read_bytes())
            # and what its globals hold now: the Snakefile may have changed them
            # (helpers.SETTINGS.update(...)) after the import
            state = self._module_state(module)
            return _sha(f"module:{module.__name__}:{source}:{state}")
        return _sha(f"installed-module:{module.__name__}{_generator_state(module)}")

    def _module_state(self, module: types.ModuleType) -> str:
        key = id(module)
        if key in self._walking:  # a module reached again from its own globals
            return "in progress"
        self._walking.add(key)
        try:
            parts = [
                f"{name}={self.digest(value, f'{module.__name__}.{name}')}"
                for name, value in sorted(vars(module).items())
                if not name.startswith("__") and not isinstance(value, types.ModuleType)
            ]
        finally:
            self._walking.discard(key)
        return _sha("|".join(parts))

    def imported(self, name: str, namespace: dict[str, Any]) -> str:
        """What ``import NAME`` inside followed code loads: its top-level module or package
        as :meth:`module_digest` counts it, whether imported yet or not. Not imported yet, it
        is found as Python will find it in this process (``sys.path`` as it is now: the
        folders Snakemake put there for the Snakefile and each included file, and what the
        workflow added); one not found there (a folder the code adds at run time) beside
        the code's module, then in the workflow's folders, as a flat module or a package."""
        top = name.split(".")[0]
        if not top:  # a relative import: the package of the code's module
            top = str(namespace.get("__package__") or "").split(".")[0]
        module = sys.modules.get(top)
        if module is not None:
            return self.module_digest(module)
        found = _found_on_sys_path(top)
        if found is not None:
            kind, places = found
            if not any(self.is_local_file(p + os.sep) for p in places):
                return _sha(f"installed-module:{top}")
            if kind == "package":  # a namespace package: each of its folders
                trees = ":".join(python_tree_digest(Path(p)) for p in places)
                return _sha(f"package:{top}:{trees}")
            return self._module_file(top, places[0])
        origin = namespace.get("__file__")
        folders = [os.path.dirname(origin)] if isinstance(origin, str) else []
        for folder in [*folders, *(d.rstrip(os.sep) for d in self._local)]:
            flat, package = Path(folder) / f"{top}.py", Path(folder) / top
            if flat.is_file():
                return _sha(f"module:{top}:{_sha(flat.read_bytes())}")
            if package.is_dir():
                return _sha(f"package:{top}:{python_tree_digest(package)}")
        if top in sys.builtin_module_names or importlib.machinery.FrozenImporter.find_spec(top):
            return _sha(f"installed-module:{top}")
        # Found nowhere now: the code puts its folder on sys.path before it imports
        # (sys.path.insert(0, "lib")), so it may be any workflow Python file.
        return _sha(f"unresolved-module:{top}:{self._local_python()}")

    def _module_file(self, top: str, path: str) -> str:
        """A workflow module not imported yet, by its file and, followed in turn, what its
        own ``import`` statements load (a sibling beside it, a module on ``sys.path``); every
        workflow Python file where it imports by a computed name or changes ``sys.path``."""
        memo = self._files.get(path)
        if memo is not None:
            return memo
        self._files[path] = _sha(f"cycle:{top}")  # a module importing itself back
        source = Path(path).read_bytes()
        parts = [f"module:{top}:{_sha(source)}"]
        try:
            names, dynamic = source_imports(ast.parse(source))
        except (SyntaxError, ValueError):
            names, dynamic = set(), False
        if dynamic:
            parts.append(f"local-python={self._local_python()}")
        for name in sorted(names - {top}):
            parts.append(f"import {name}={self.imported(name, {'__file__': path})}")
        found = _sha("|".join(parts))
        self._files[path] = found
        return found

    # ---- internals --------------------------------------------------------------------------

    def _compute(self, obj: Any, path: str) -> str:
        if obj is None or isinstance(obj, (bool, int, float, complex, str, bytes)):
            return _sha(repr(obj))
        if isinstance(obj, types.FunctionType):
            return self._function(obj, path)
        if isinstance(obj, types.CodeType):
            return self._code(obj, path)
        if isinstance(obj, types.ModuleType):
            return self.module_digest(obj)
        if isinstance(obj, type):
            return self._class(obj, path)
        if isinstance(obj, functools.partial):
            parts = [
                self.digest(obj.func, f"{path}.func"),
                self.digest(obj.args, f"{path}.args"),
                self.digest(obj.keywords, f"{path}.keywords"),
            ]
            return _sha("partial:" + ",".join(parts))
        if isinstance(obj, types.MethodType):
            func = self.digest(obj.__func__, f"{path}.__func__")
            bound = self.digest(obj.__self__, f"{path}.__self__")
            return _sha(f"method:{func}:{bound}")
        if isinstance(obj, (staticmethod, classmethod)):
            return _sha(f"{type(obj).__name__}:" + self.digest(obj.__func__, path))
        if isinstance(obj, property):
            parts = [self.digest(f, path) for f in (obj.fget, obj.fset, obj.fdel)]
            return _sha("property:" + ",".join(parts))
        if isinstance(
            obj,
            (
                types.BuiltinFunctionType,
                types.MethodDescriptorType,
                types.WrapperDescriptorType,
                types.MethodWrapperType,
                types.ClassMethodDescriptorType,
                types.GetSetDescriptorType,
                types.MemberDescriptorType,
            ),
        ):
            owner = getattr(obj, "__module__", None) or getattr(
                getattr(obj, "__objclass__", None), "__qualname__", "?"
            )
            name = f"builtin:{owner}.{getattr(obj, '__qualname__', repr(obj))}"
            of = getattr(obj, "__self__", None)
            if of is not None and not isinstance(of, types.ModuleType):
                # a method of a value ("{:.2f}".format, a generator's .random): the value
                # too, where it has a digest (sys.stdout.write stays by name, as before)
                try:
                    return _sha(f"{name}:" + self.digest(of, f"{path}.__self__"))
                except Exception:  # Unfollowable, or a value with no stable description
                    pass
            return _sha(name)
        if isinstance(obj, (list, tuple)):
            inner = ",".join(self.digest(v, f"{path}[{i}]") for i, v in enumerate(obj))
            return _sha(f"{type(obj).__name__}[{inner}]")
        if isinstance(obj, (set, frozenset)):
            inner = ",".join(sorted(self.digest(v, f"{path} item") for v in obj))
            return _sha(f"{type(obj).__name__}{{{inner}}}")
        if isinstance(obj, (dict, types.MappingProxyType)):
            # In order: iterating a dict is what code sees.
            items = [
                f"{self.digest(k, f'{path} key')}:{self.digest(v, f'{path}[{k!r}]')}"
                for k, v in obj.items()
            ]
            return _sha(f"{type(obj).__qualname__}{{" + ",".join(items) + "}")
        wrapped = getattr(obj, "__wrapped__", None)
        if wrapped is not None and callable(obj):
            # functools.wraps, lru_cache: the wrapper's type and the code it wraps
            inner = self.digest(wrapped, f"{path}.__wrapped__")
            return _sha(f"wrapper:{type(obj).__qualname__}:{inner}")
        if self._is_workflow_object(obj):
            # An instance of a class the workflow defines: by its class and its state (never
            # by its repr, which may leave fields out).
            return self._instance(obj, path)
        try:
            return _sha(self._value_text(obj))
        except ValueError as e:
            reason = e
        # Its plain form failed somewhere inside (a lambda held in a state): walk what pickle
        # would rebuild it from, following code on the way.
        try:
            rebuild, parts = reduce_parts(obj)
        except ValueError:
            raise Unfollowable(f"{path} has no stable representation ({reason})") from None
        inner = ",".join(self.digest(part, f"{path} state") for part in parts)
        return _sha(f"reduce:{type(obj).__module__}.{type(obj).__qualname__}:{rebuild}:{inner}")

    def _function(self, fn: types.FunctionType, path: str) -> str:
        if not self.is_local_file(fn.__code__.co_filename):
            # An installed library's function (Snakemake's expand, a package's helper): the
            # software environment's business, by its name; but what the workflow hung on it
            # counts (functools.singledispatch's registry, a wrapped function).
            name = f"installed-function:{fn.__module__}.{fn.__qualname__}"
            attached = getattr(fn, "__dict__", None)
            if attached:
                name += ":" + self.digest(dict(attached), f"{path} attributes")
            return _sha(name)
        parts = [self._code(fn.__code__, path)]
        parts.append(self.digest(fn.__defaults__, f"{path} defaults"))
        parts.append(self.digest(fn.__kwdefaults__, f"{path} keyword defaults"))
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or (), strict=True):
            try:
                value = cell.cell_contents
            except ValueError:  # an empty cell: not bound yet
                parts.append(f"{name}=<empty>")
                continue
            parts.append(f"{name}={self.digest(value, f'{path} -> {name}')}")
        if getattr(fn, "__dict__", None):  # attributes set on the function (f.prefix = ...)
            parts.append(f"__dict__={self.digest(dict(fn.__dict__), f'{path} attributes')}")
        module_globals = fn.__globals__
        builtins = module_globals.get("__builtins__", {})
        names, imports, attributes = code_names_and_attributes(fn.__code__)
        for name in sorted(imports):
            parts.append(f"import {name}={self.imported(name, module_globals)}")
        if "random" in attributes:  # np.random.rand(): numpy's global generator
            numpy_random = sys.modules.get("numpy.random")
            if numpy_random is not None and any(
                getattr(module_globals.get(n), "__name__", None) == "numpy" for n in names
            ):
                parts.append(f"numpy.random={_generator_state(numpy_random)}")
        if attributes & DYNAMIC_MODULE_ATTRIBUTES or names & {"__import__"}:
            # sys.modules["helpers"], importlib.import_module(name): any loaded module of
            # the workflow may be the one used
            parts.append(f"loaded-modules={self._loaded_local_modules()}")
        if attributes & LOADERS or names & {"__import__"}:
            # importlib.import_module("methods." + x), a module loaded from a file path: one
            # not loaded yet may be any workflow Python file
            parts.append(f"local-python={self._local_python()}")
        if names & DYNAMIC_NAMES:
            # globals()[...], vars(), eval/exec of a string, __import__(name): any global and,
            # for code run from text, any workflow Python file may be what runs.
            parts.append(f"namespace={self._namespace(module_globals, path)}")
            if names & DYNAMIC_CODE:
                parts.append(f"local-python={self._local_python()}")
        for name in sorted(names):
            if name in module_globals:
                value = module_globals[name]
                parts.append(f"{name}={self.digest(value, f'{path} -> {name}')}")
            elif name in (builtins if isinstance(builtins, dict) else vars(builtins)):
                parts.append(f"{name}=<builtin>")
            else:
                parts.append(f"{name}=<unbound>")
        return _sha("function:" + "|".join(parts))

    def _namespace(self, namespace: dict[str, Any], path: str) -> str:
        """Every global of a workflow namespace, but Snakemake's own objects (the workflow,
        rules, checkpoints: the run's machinery, not the job's code) and dunder names."""
        parts = []
        for name, value in list(namespace.items()):
            if name.startswith("__") or _is_snakemake_object(value):
                continue
            parts.append(f"{name}={self.digest(value, f'{path} -> globals()[{name!r}]')}")
        return _sha("namespace:" + "|".join(sorted(parts)))

    def _loaded_local_modules(self) -> str:
        parts = []
        for name, module in sorted(sys.modules.items()):
            filename = getattr(module, "__file__", None)
            if isinstance(module, types.ModuleType) and self.is_local_file(filename):
                parts.append(f"{name}={self.module_digest(module)}")
        return _sha("|".join(parts))

    def _local_python(self) -> str:
        if self._local_python_digest is None:
            self._local_python_digest = _sha(
                "|".join(python_tree_digest(Path(d)) for d in self._local)
            )
        return self._local_python_digest

    def _code(self, co: types.CodeType, path: str) -> str:
        consts = []
        for c in co.co_consts:
            if isinstance(c, types.CodeType):
                consts.append(self._code(c, path))
            else:
                consts.append(_sha(_const_text(c)))
        fields = [
            co.co_name,
            getattr(co, "co_qualname", co.co_name),
            str(co.co_argcount),
            str(co.co_posonlyargcount),
            str(co.co_kwonlyargcount),
            str(co.co_flags),
            co.co_code.hex(),
            getattr(co, "co_exceptiontable", b"").hex(),
            ",".join(co.co_names),
            ",".join(co.co_varnames),
            ",".join(co.co_freevars),
            ",".join(co.co_cellvars),
            ",".join(consts),
        ]
        return _sha("code:" + "|".join(fields))

    def _class(self, cls: type, path: str) -> str:
        if not self._is_workflow_class(cls):
            return _sha(f"class:{cls.__module__}.{cls.__qualname__}")
        parts = [cls.__qualname__]
        parts += [self.digest(b, f"{path} base {b.__qualname__}") for b in cls.__bases__]
        for name, member in sorted(vars(cls).items()):
            if name not in _SKIPPED_CLASS_MEMBERS:
                parts.append(f"{name}={self.digest(member, f'{path}.{name}')}")
        return _sha("class:" + "|".join(parts))

    def _instance(self, obj: Any, path: str) -> str:
        cls = self.digest(type(obj), f"{path} class")
        state = getattr(obj, "__dict__", None)
        if state is None:
            raise Unfollowable(f"{path} ({type(obj).__qualname__} object) has no readable state")
        return _sha(f"instance:{cls}:" + self.digest(dict(state), f"{path} attributes"))

    def _is_workflow_class(self, cls: type) -> bool:
        """A class the workflow defines: in a workflow-local module, or with a method compiled
        from a workflow file, or (a class without methods, ``class Cfg: N = 1``) in a
        namespace that is no installed module's (a Snakefile's, a Snakemake ``module``'s),
        or in the main Snakefile's (``snakemake.workflow``) with no installed method."""
        module = sys.modules.get(cls.__module__)
        filename = getattr(module, "__file__", None) if module is not None else None
        if self.is_local_file(filename):
            return True
        installed_method = False
        for member in vars(cls).values():
            func = getattr(member, "__func__", member)
            code = getattr(func, "__code__", None)
            if code is None:
                continue
            if self.is_local_file(code.co_filename):
                return True
            installed_method = True
        if module is None:
            return True
        return cls.__module__ == SNAKEFILE_NAMESPACE and not installed_method

    def _is_workflow_object(self, obj: Any) -> bool:
        return self._is_workflow_class(type(obj)) and not isinstance(obj, type)


DYNAMIC_NAMES = frozenset({"globals", "vars", "locals", "eval", "exec", "compile", "__import__"})
"""Builtins through which code can reach any global of its namespace by a computed name."""
DYNAMIC_CODE = frozenset({"eval", "exec", "compile", "__import__"})
"""Builtins through which code can run code from text (a file, a string)."""
DYNAMIC_MODULE_ATTRIBUTES = frozenset({"modules", "import_module", "reload", "find_spec"})
"""Attributes through which code reaches a module by a computed name (``sys.modules[...]``,
``importlib.import_module(...)``)."""
LOADERS = frozenset(
    {
        "import_module",
        "find_spec",
        "spec_from_file_location",
        "module_from_spec",
        "exec_module",
        "load_module",
        "SourceFileLoader",
        "load_source",
        "run_path",
        "run_module",
        "addsitedir",
    }
)
"""Functions and methods that load a module by a computed name or from a file path (or add
a folder to the import path): what they load may not be loaded yet, so every workflow Python
file counts."""


def _is_snakemake_object(value: Any) -> bool:
    """An instance of Snakemake's (or a Snakemake plugin's) own classes: the workflow,
    ``rules``, ``checkpoints``, ``storage`` (the run's machinery, counted by other
    components where it matters)."""
    if isinstance(value, (type, types.FunctionType, types.ModuleType)):
        return False
    return str(getattr(type(value), "__module__", "")).startswith("snakemake")


def _generator_state(module: types.ModuleType) -> str:
    """The state of a random module's global generator (``random``, ``numpy.random``): what a
    draw gives depends on it (``random.seed(42)`` in the Snakefile). Unseeded, it comes from
    the OS and differs in every run, so a block drawing from it runs every time, as two fresh
    runs would differ."""
    try:
        if module.__name__ == "random":
            return ":" + _sha(repr(module.getstate()))
        if module.__name__ == "numpy.random":
            _, keys, pos, gauss, cached = module.get_state()
            return f":{_sha(keys.tobytes())}:{pos}:{gauss}:{cached}"
    except Exception:  # a module without the usual generator API: by name only
        return ""
    return ""


def _const_text(value: Any) -> str:
    """A code object's constant as text the same in every process (frozensets sorted)."""
    if isinstance(value, frozenset):
        return "frozenset{" + ",".join(sorted(_const_text(v) for v in value)) + "}"
    if isinstance(value, tuple):
        return "(" + ",".join(_const_text(v) for v in value) + ")"
    return f"{type(value).__name__}:{value!r}"
