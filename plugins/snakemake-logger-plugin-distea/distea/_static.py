"""What the workflow's sources say, for the blind spots of a trace (pure: reads files, runs none).

A trace only shows what the tracer saw. Where it may not have seen everything, the sources
tell DISTEA whether a changed function *could* have run there unseen:

* a function reached through a reference taken when its module was imported (a dispatch
  table ``{"range": f_range}``, ``functools.partial(f)``, a callback list) or wrapped by a
  decorator bypasses the ``wrap`` tracer, which replaces module attributes after import;
* a function of a ``script:`` file or a nested function is never traced individually there;
* the Snakefile (and what it includes and imports) runs in Snakemake's own process, which
  evaluates input functions and ``params`` callables while building the DAG;
* a rule's code (script, shell command) tells whether an untraced job can run Python code of
  the workflow at all.

The analysis is an approximation by name (no type inference); where it cannot decide it says
"may", and the query treats "may" as "does" (conservative) with a warning.
"""

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

SNAKEFILES = ("Snakefile", "snakefile", "workflow/Snakefile", "workflow/snakefile")
_SAFE_DECORATORS = {"staticmethod", "classmethod", "property"}
_INCLUDE = re.compile(r"^\s*include:\s*[\"']([^\"']+)[\"']", re.M)
_RULE = re.compile(r"^(?:local)?(?:rule|checkpoint)\s+(\w+)\s*:", re.M)


@dataclass
class RuleCode:
    """How one rule runs: ``script``, ``shell``, ``run``, ``wrapper``, ``notebook`` or none."""

    name: str
    kind: Optional[str] = None
    text: str = ""
    script: Optional[str] = None
    sticky: bool = False
    """Runs on a sticky worker (whose template module may import anything)."""


@dataclass
class Workflow:
    """The static facts about one workflow directory that the query needs."""

    root: Path
    snakefile: Optional[Path] = None
    snakefile_modules: set[str] = field(default_factory=set)
    """Workflow modules the Snakefile (and its includes) imports, transitively."""
    snakefile_text: str = ""
    functions: dict[str, str] = field(default_factory=dict)
    """Qualified name of every function defined in workflow modules -> ``file:line``."""
    indirect: dict[str, str] = field(default_factory=dict)
    """Functions whose calls may bypass attribute wrapping -> the evidence (``file:line: ...``)."""
    rules: dict[str, RuleCode] = field(default_factory=dict)

    def module_of(self, name: str) -> Optional[str]:
        """The workflow module defining function ``name`` (longest known prefix)."""
        parts = name.split(".")
        for end in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:end])
            if self._module_file(module) is not None:
                return module
        return None

    def _module_file(self, module: str) -> Optional[Path]:
        base = self.root / module.replace(".", "/")
        for path in (base.with_suffix(".py"), base / "__init__.py"):
            if path.is_file():
                return path
        return None

    def rule_may_run(self, rule: str, module: str) -> Optional[str]:
        """Why a job of ``rule`` may run workflow module ``module`` (None: it cannot)."""
        code = self.rules.get(rule)
        if code is None:
            return "its rule is not in the Snakefile"
        if code.sticky:
            return f"rule {rule} runs on a sticky worker, whose template may import it"
        if code.kind is None:
            return None
        if code.kind == "script" and code.script:
            path = self.root / code.script
            if not path.suffix == ".py":
                return f"rule {rule} runs {code.script}"
            reach = {path.stem} | import_closure(path, self.root)
            script_module = code.script[:-3].replace("/", ".")
            if module == script_module or _covers(reach, module):
                return f"rule {rule}'s script {code.script} imports it"
            return None
        if code.kind == "shell":
            scripts = re.findall(r"([\w./-]+\.py)\b", code.text)
            for script in scripts:
                path = self.root / script
                if path.is_file():
                    reach = import_closure(path, self.root)
                    if module == script[:-3].replace("/", ".") or _covers(reach, module):
                        return f"rule {rule}'s shell command runs {script}, which imports it"
            if re.search(r"\bpython3?\b.*\s-[cm]\b", code.text):
                return f"rule {rule}'s shell command runs Python code"
            return None
        if code.kind == "run":
            return f"rule {rule} has a run: block (Snakemake's process)"
        return f"rule {rule} uses {code.kind}:"


def _covers(modules: set[str], module: str) -> bool:
    return any(module == m or module.startswith(m + ".") for m in modules)


def load_workflow(root: "str | Path | None") -> Optional[Workflow]:
    """Read the workflow under ``root``; None when there is no such directory."""
    if not root:
        return None
    base = Path(root)
    if not base.is_dir():
        return None
    wf = Workflow(base)
    for name in SNAKEFILES:
        if (base / name).is_file():
            wf.snakefile = base / name
            break
    texts: list[str] = []
    if wf.snakefile is not None:
        seen: set[Path] = set()
        queue = [wf.snakefile]
        while queue:
            path = queue.pop()
            if path in seen or not path.is_file():
                continue
            seen.add(path)
            text = path.read_text(errors="replace")
            texts.append(text)
            queue += [path.parent / inc for inc in _INCLUDE.findall(text)]
        wf.snakefile_text = "\n".join(texts)
        wf.snakefile_modules = _imports_in_text(wf.snakefile_text, base)
        wf.rules = _rules(wf.snakefile_text)
    for path in sorted(base.rglob("*.py")):
        relative = path.relative_to(base)
        skip = ("venv", "__pycache__", "site-packages", "node_modules")
        if any(p.startswith(".") or p in skip for p in relative.parts):
            continue
        module = ".".join(relative.with_suffix("").parts)
        if module.endswith(".__init__"):
            module = module[: -len(".__init__")]
        try:
            tree = ast.parse(path.read_text(errors="replace"), str(path))
        except SyntaxError:
            continue
        _scan_module(tree, module, str(relative), wf)
    return wf


def _imports_in_text(text: str, root: Path) -> set[str]:
    """Workflow modules a Snakefile imports (line by line: a Snakefile is not plain Python)."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip().startswith(("import ", "from "))]
    modules: set[str] = set()
    for line in lines:
        try:
            tree = ast.parse(line)
        except SyntaxError:
            continue
        modules |= _closure_of(tree, root, set())
    return modules


def import_closure(script: Path, root: Path) -> set[str]:
    """Dotted names of the workflow modules (under ``root``) that ``script`` can import."""
    try:
        tree = ast.parse(script.read_text(errors="replace"), str(script))
    except (OSError, SyntaxError):
        return set()
    return _closure_of(tree, root, set())


def _closure_of(tree: ast.AST, root: Path, seen: set[str]) -> set[str]:
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        for name in names:
            parts = name.split(".")
            for end in range(1, len(parts) + 1):
                prefix = ".".join(parts[:end])
                if prefix in seen:
                    continue
                base = root / prefix.replace(".", "/")
                for file in (base.with_suffix(".py"), base / "__init__.py"):
                    if file.is_file():
                        seen.add(prefix)
                        try:
                            sub = ast.parse(file.read_text(errors="replace"), str(file))
                        except SyntaxError:
                            break
                        _closure_of(sub, root, seen)
                        break
    return seen


def _rules(text: str) -> dict[str, RuleCode]:
    rules: dict[str, RuleCode] = {}
    matches = list(_RULE.finditer(text))
    for i, m in enumerate(matches):
        body = text[m.end() : matches[i + 1].start() if i + 1 < len(matches) else len(text)]
        code = RuleCode(m.group(1), sticky=bool(re.search(r"\bsticky\s*=", body)))
        for kind in ("script", "shell", "run", "wrapper", "notebook", "cwl"):
            found = re.search(
                rf"^\s+{kind}:\s*(.*?)(?=^\s{{0,8}}\w+:\s*$|^\S|\Z)", body, re.M | re.S
            )
            if found:
                code.kind = kind
                code.text = found.group(1)
                if kind == "script":
                    path = re.search(r"[\"']([^\"']+)[\"']", code.text)
                    code.script = path.group(1) if path else None
                break
        rules[code.name] = code
    return rules


def _scan_module(tree: ast.Module, module: str, file: str, wf: Workflow) -> None:
    """Record the module's functions and those reachable through references (see module doc)."""
    defined: dict[tuple[str, ...], dict[str, str]] = {}
    """Scope (qualname parts) -> {local function name: qualified name}."""

    def visit_defs(body: list[ast.stmt], scope: tuple[str, ...], nested: bool) -> None:
        names = defined.setdefault(scope, {})
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qual = ".".join((module, *scope, node.name))
                names[node.name] = qual
                wf.functions[qual] = f"{file}:{node.lineno}"
                if nested:
                    wf.indirect.setdefault(qual, f"{file}:{node.lineno}: a nested function")
                for deco in node.decorator_list:
                    label = ast.unparse(deco)
                    if label.split("(")[0].split(".")[-1] not in _SAFE_DECORATORS:
                        wf.indirect.setdefault(
                            qual, f"{file}:{deco.lineno}: decorated with @{label[:40]}"
                        )
                visit_defs(node.body, (*scope, node.name, "<locals>"), True)
            elif isinstance(node, ast.ClassDef):
                visit_defs(node.body, (*scope, node.name), nested)

    visit_defs(tree.body, (), False)
    module_level = defined.get((), {})
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    for node in _import_time_nodes(tree.body):
        if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)):
            continue
        if id(node) in called:
            continue
        qual = module_level.get(node.id) or next(
            (names[node.id] for names in defined.values() if node.id in names), None
        )
        if qual is not None:
            wf.indirect.setdefault(
                qual, f"{file}:{node.lineno}: {node.id} is taken as a value when the module loads"
            )


def _import_time_nodes(body: list[ast.stmt]) -> "list[ast.AST]":
    """Nodes evaluated when the module is imported: not function bodies (they run later, and
    then read the module attribute, which the wrap tracer has replaced by then)."""
    out: list[ast.AST] = []
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            parts: list[ast.AST] = [*stmt.decorator_list, *stmt.args.defaults]
            parts += [d for d in stmt.args.kw_defaults if d is not None]
            for part in parts:
                out.extend(ast.walk(part))
        elif isinstance(stmt, ast.ClassDef):
            for part in [*stmt.decorator_list, *stmt.bases]:
                out.extend(ast.walk(part))
            out.extend(_import_time_nodes(stmt.body))
        else:
            out.extend(ast.walk(stmt))
    return out
