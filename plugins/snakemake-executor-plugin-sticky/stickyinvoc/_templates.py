"""Sticky templates: declaring them, finding them, building and tearing down their states.

A template is a plain Python function in ``sticky_templates.py`` beside the Snakefile,
decorated with :func:`template`. It either *returns* the state, or *yields* it once and
tears it down after the ``yield`` (like :func:`contextlib.contextmanager`)::

    @template("minilm")
    def minilm():
        model = load_model()
        yield model
        del model          # teardown, when the worker stops

The executor never imports the templates file in the Snakemake process: it only reads its
syntax tree (:func:`declared_templates`) to check template names before any job runs, so a
heavy ``import torch`` at the top of the file costs nothing there.
"""

import ast
import importlib.util
import os
import sys
import time
import traceback
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

TEMPLATES_FILENAME = "sticky_templates.py"
TEMPLATES_ENV_VAR = "STICKY_TEMPLATES"
"""Environment variable naming the templates file; overrides the search beside the Snakefile."""

TemplateFunction = Callable[[], Any]

ISOLATION_MODES = ("fork", "direct")
"""How a template's invocations run: each in a child forked from the warm worker (``fork``, the
default), or in the worker itself, checked after each (``direct``)."""

_collecting: Optional[dict[str, TemplateFunction]] = None


class TemplateError(Exception):
    """Base class for errors about sticky templates."""


class TemplateNotFoundError(TemplateError):
    """A rule names a template that no templates file declares."""

    def __init__(self, name: str, templates_file: Optional[Path], known: list[str]) -> None:
        self.name = name
        self.templates_file = templates_file
        self.known = known
        where = str(templates_file) if templates_file else f"no {TEMPLATES_FILENAME} was found"
        hint = f"declared templates: {', '.join(known)}" if known else "it declares no template"
        super().__init__(
            f"sticky template {name!r} is not declared ({where}; {hint}). Declare it with "
            f"@template({name!r}) in {TEMPLATES_FILENAME} beside the Snakefile, or fix the "
            f"rule's resources: sticky=... value."
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.name, self.templates_file, self.known))


class TemplateBuildError(TemplateError):
    """A template function raised while building its state."""

    def __init__(self, name: str, formatted_traceback: str) -> None:
        self.name = name
        self.formatted_traceback = formatted_traceback
        super().__init__(
            f"sticky template {name!r} failed to build its state:\n{formatted_traceback}"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.name, self.formatted_traceback))


def template(
    name: "str | TemplateFunction",
    *,
    resources: Optional[dict[str, Any]] = None,
    partitions: Optional[list[str]] = None,
    isolation: str = "fork",
) -> Any:
    """Declare a sticky template.

    Use as ``@template("name")``, or bare as ``@template`` (the function's name is the
    template's name). The function is returned unchanged, so it stays callable by hand.

    ``resources`` describe the worker that builds the template when workers are Slurm pilots,
    in the Slurm executor plugin's vocabulary (``slurm_partition``, ``slurm_account``,
    ``runtime`` in minutes, ``mem_mb``, ``cpus_per_task``, ``gpu``, ``gpu_model``, ``gres``,
    ``constraint``, ``qos``, ``slurm_extra``). A rule's own resources of the same names override
    them for its invocations. ``partitions`` lists the Slurm partitions the template may be
    built on (the first is the default). ``isolation`` is ``"fork"`` (the default: each
    invocation runs in a child forked from the process that built the state, which never runs
    one itself; where forking that process is unsafe, a GPU runtime or threads it left
    running, the worker says so and uses direct mode) or ``"direct"`` (each invocation runs in
    the worker itself, which puts back what it can and is retired after any invocation that
    changed its process). All must be literals: the executor reads them from the file's
    syntax tree without running the file.
    """
    if isolation not in ISOLATION_MODES:
        raise TypeError(
            f"@template(isolation={isolation!r}): isolation must be one of "
            f"{', '.join(map(repr, ISOLATION_MODES))}"
        )

    def register(fn: TemplateFunction, template_name: str) -> TemplateFunction:
        if _collecting is not None:
            _collecting[template_name] = fn
        return fn

    if callable(name):
        return register(name, name.__name__)
    if not isinstance(name, str) or not name:
        raise TypeError("@template(...) takes the template's name as a non-empty string")
    return lambda fn: register(fn, name)


def load_templates(path: Path) -> dict[str, TemplateFunction]:
    """Execute a templates file and return the templates it declares, by name."""
    global _collecting
    path = Path(path).resolve()
    if not path.is_file():
        raise TemplateError(f"sticky templates file {path} does not exist")
    module_name = f"_sticky_templates_{abs(hash(str(path)))}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise TemplateError(f"cannot load sticky templates file {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    # Templates often import helpers that live beside them.
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    previous, _collecting = _collecting, {}
    try:
        spec.loader.exec_module(module)
        _traced_from_here()
        return dict(_collecting)
    finally:
        _collecting = previous


def _traced_from_here() -> None:
    """When DISTEA traces this process, the templates file's functions (loaded from its path,
    around the import hooks) record themselves from their first build on."""
    tracer = sys.modules.get("distea.tracer")
    trace = tracer.active() if tracer is not None else None  # type: ignore[attr-defined]
    if trace is not None:
        trace.instrument_loaded()


@dataclass(frozen=True)
class TemplateDeclaration:
    """A ``@template`` declaration as read from the syntax tree (nothing is executed)."""

    name: str
    line: int
    resources: dict[str, Any] = field(default_factory=dict)
    partitions: Optional[list[str]] = None
    isolation: str = "fork"


def read_declarations(path: Path) -> dict[str, TemplateDeclaration]:
    """Every template a file declares, with its literal ``resources=`` and ``partitions=``,
    from one parse of the file and without running it.

    Recognises ``@template("name")``, ``@template(name="name")`` and bare ``@template``
    (also spelled ``@stickyinvoc.template``)."""
    tree = ast.parse(Path(path).read_text(), filename=str(path))
    found: dict[str, TemplateDeclaration] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for deco in node.decorator_list:
            target = deco.func if isinstance(deco, ast.Call) else deco
            is_template = (isinstance(target, ast.Name) and target.id == "template") or (
                isinstance(target, ast.Attribute) and target.attr == "template"
            )
            if not is_template:
                continue
            if not isinstance(deco, ast.Call):
                found[node.name] = TemplateDeclaration(node.name, node.lineno)
                continue
            kw = {k.arg: k.value for k in deco.keywords}
            args = list(deco.args) + ([kw["name"]] if "name" in kw else [])
            if not (args and isinstance(args[0], ast.Constant) and isinstance(args[0].value, str)):
                continue
            name = args[0].value
            literals = {
                k: _literal(path, deco, name, k, kw[k])
                for k in ("resources", "partitions", "isolation")
                if k in kw
            }
            resources = literals.get("resources", {})
            if not isinstance(resources, dict):
                raise TemplateError(f"{path}: resources= of template {name!r} must be a dict")
            partitions = literals.get("partitions")
            if partitions is not None and not (
                isinstance(partitions, list | tuple)
                and partitions
                and all(isinstance(p, str) for p in partitions)
            ):
                raise TemplateError(
                    f"{path}: partitions= of template {name!r} must be a non-empty list of names"
                )
            isolation = literals.get("isolation", "fork")
            if isolation not in ISOLATION_MODES:
                raise TemplateError(
                    f"{path}, line {deco.lineno}: isolation= of template {name!r} is "
                    f"{isolation!r}; use one of {', '.join(map(repr, ISOLATION_MODES))}"
                )
            found[name] = TemplateDeclaration(
                name, node.lineno, resources, list(partitions) if partitions else None, isolation
            )
    return found


def _literal(path: Path, deco: ast.expr, name: str, keyword: str, node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except ValueError:
        raise TemplateError(
            f"{path}, line {deco.lineno}: {keyword}= of template {name!r} must be a "
            "literal (it is read without running the file)"
        ) from None


def declared_templates(path: Path) -> dict[str, int]:
    """Names of the templates a file declares, with their line numbers."""
    return {name: d.line for name, d in read_declarations(path).items()}


def declared_resources(path: Path) -> dict[str, dict[str, Any]]:
    """The literal ``resources=`` dict of each template that declares one."""
    return {n: d.resources for n, d in read_declarations(path).items() if d.resources}


def declared_partitions(path: Path) -> dict[str, list[str]]:
    """The ``partitions=`` list of each template that restricts where it may be built."""
    return {n: d.partitions for n, d in read_declarations(path).items() if d.partitions}


def find_templates_file(start: "str | os.PathLike[str] | None") -> Optional[Path]:
    """Locate the templates file: ``$STICKY_TEMPLATES``, else the nearest
    ``sticky_templates.py`` in ``start`` or one of its parents."""
    env = os.environ.get(TEMPLATES_ENV_VAR)
    if env:
        return Path(env).resolve()
    if start is None:
        return None
    here = Path(start).resolve()
    for folder in (here, *here.parents):
        candidate = folder / TEMPLATES_FILENAME
        if candidate.is_file():
            return candidate
    return None


@dataclass
class BuiltState:
    """A template's state, with what is needed to tear it down and how long it took."""

    name: str
    value: Any
    build_seconds: float
    _generator: Optional[Generator[Any, None, None]] = field(default=None, repr=False)

    def teardown(self) -> Optional[str]:
        """Run the template's teardown (the code after its ``yield``).

        Returns a formatted traceback if the teardown raised, else None.
        """
        gen, self._generator = self._generator, None
        if gen is None:
            return None
        try:
            next(gen)
        except StopIteration:
            return None
        except BaseException:
            return traceback.format_exc()
        gen.close()
        return f"sticky template {self.name!r} yielded more than once; only one yield is allowed"


def build_state(name: str, fn: TemplateFunction) -> BuiltState:
    """Build one template's state; raise :class:`TemplateBuildError` with its traceback."""
    start = time.perf_counter()
    try:
        result = fn()
        if isinstance(result, Generator):
            value = next(result)
            return BuiltState(name, value, time.perf_counter() - start, result)
        return BuiltState(name, result, time.perf_counter() - start)
    except StopIteration:
        raise TemplateBuildError(name, "the template function returned without yielding") from None
    except Exception as e:
        raise TemplateBuildError(name, user_traceback(e)) from None


def user_traceback(error: BaseException) -> str:
    """Format ``error``'s traceback with the user's frames only: not this package's or the
    executor's (loading the templates file, the import watch around it), nor the import
    system's own (``<frozen importlib._bootstrap>``)."""
    frames = traceback.extract_tb(error.__traceback__)
    ours = (str(Path(__file__).parent), str(Path(__file__).parent.parent / _EXECUTOR_PACKAGE))
    kept = [
        f
        for f in frames
        if not f.filename.startswith(ours) and not f.filename.startswith("<frozen importlib")
    ]
    lines = traceback.format_list(kept or frames) + traceback.format_exception_only(error)
    return "Traceback (most recent call last):\n" + "".join(lines)


_EXECUTOR_PACKAGE = "snakemake_executor_plugin_sticky"
