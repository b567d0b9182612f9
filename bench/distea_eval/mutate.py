"""Mutants of a subject workflow, generated (not hand-picked): pure, no processes.

* **Function mutants**: every function of the subject's helper modules (and of its sticky
  template file) gets one mutant per operator that applies to its body, at the first place
  it applies: ``const`` (a number n -> n + 1, or x 1.5 for floats), ``cmp`` (a comparison
  flipped: < <=, > >=, == !=), ``arith`` (+ -, - +, * /, / *), ``cond`` (an ``if`` test
  negated). A mutant names its change ``func:MODULE.QUALNAME`` (``template:NAME`` for a
  template builder).
* **Parameter mutants**: every ``config.get("KEY", number)`` in the Snakefile, the number
  changed through ``--config``: ``param:RULE.NAME``.
* **Input-file mutants**: every file under ``data/``, its first number changed:
  ``file:data/NAME``.
* **Config-file mutants**: every numeric leaf of the subject's ``config.yaml`` (nested keys
  included), changed in the file: ``config:KEY`` (what ``file:config.yaml`` maps to when the
  file in the workflow directory has the change; here the base run's directory keeps the old
  file).

Each mutant is an edit of one span of one file (the rest of the file keeps its bytes).
"""

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

OPERATORS = ("const", "cmp", "arith", "cond")
_CMP = {ast.Lt: "<=", ast.LtE: "<", ast.Gt: ">=", ast.GtE: ">", ast.Eq: "!=", ast.NotEq: "=="}
_ARITH = {ast.Add: "-", ast.Sub: "+", ast.Mult: "/", ast.Div: "*"}


@dataclass
class Mutant:
    name: str
    changes: list[str]
    kind: str
    """``func``, ``template``, ``param`` or ``file``."""
    edits: list[tuple[str, int, int, str]] = field(default_factory=list)
    """(file, start offset, end offset, new text) in the file's text."""
    config: dict[str, Any] = field(default_factory=dict)

    def apply(self, workdir: Path) -> None:
        for name, start, end, new in self.edits:
            path = workdir / name
            text = path.read_text()
            path.write_text(text[:start] + new + text[end:])


def _offsets(text: str) -> list[int]:
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts


def _span(lines: list[int], node: ast.AST) -> tuple[int, int]:
    start = lines[node.lineno - 1] + node.col_offset  # type: ignore[attr-defined]
    end = lines[node.end_lineno - 1] + node.end_col_offset  # type: ignore[attr-defined]
    return start, end


def _site(
    fn: ast.AST, operator: str, text: str, lines: list[int]
) -> Optional[tuple[int, int, str]]:
    """(start, end, replacement) of ``operator``'s first site in ``fn``'s body, or None."""
    body = [n for stmt in fn.body for n in ast.walk(stmt)]  # type: ignore[attr-defined]
    for node in body:
        if operator == "const" and isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                continue
            start, end = _span(lines, node)
            new = repr(value + 1) if isinstance(value, int) else repr(round(value * 1.5 + 0.5, 6))
            return start, end, new
        if operator == "cmp" and isinstance(node, ast.Compare):
            op = type(node.ops[0])
            if op not in _CMP:
                continue
            left_end = _span(lines, node.left)[1]
            right_start = _span(lines, node.comparators[0])[0]
            segment = text[left_end:right_start]
            old = segment.strip()
            return left_end, right_start, segment.replace(old, _CMP[op], 1)
        if operator == "arith" and isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
            left_end = _span(lines, node.left)[1]
            right_start = _span(lines, node.right)[0]
            segment = text[left_end:right_start]
            old = segment.strip().strip("()").strip()
            if old not in ("+", "-", "*", "/"):
                continue
            return left_end, right_start, segment.replace(old, _ARITH[type(node.op)], 1)
        if operator == "cond" and isinstance(node, ast.If):
            start, end = _span(lines, node.test)
            return start, end, f"not ({text[start:end]})"
    return None


def _functions(tree: ast.Module) -> list[tuple[str, ast.AST]]:
    out: list[tuple[str, ast.AST]] = []

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out.append((prefix + node.name, node))
                visit(node.body, f"{prefix}{node.name}.<locals>.")
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")

    visit(tree.body, "")
    return out


def function_mutants(root: Path, files: list[str], templates: Optional[dict[str, str]] = None):
    """One mutant per (function, operator) of the helper ``files`` (paths under ``root``).

    ``templates`` maps a template file to its template name: mutants of its functions are
    template changes.
    """
    mutants: list[Mutant] = []
    for file in files:
        text = (root / file).read_text()
        lines = _offsets(text)
        module = file[:-3].replace("/", ".").removesuffix(".__init__")
        for qualname, fn in _functions(ast.parse(text)):
            for operator in OPERATORS:
                site = _site(fn, operator, text, lines)
                if site is None:
                    continue
                start, end, new = site
                template = (templates or {}).get(file)
                change = f"template:{template}" if template else f"func:{module}.{qualname}"
                old = text[start:end].strip()
                mutants.append(
                    Mutant(
                        f"{operator} {module}.{qualname}: {old[:24]!r} -> {new.strip()[:24]!r}",
                        [change],
                        "template" if template else "func",
                        [(file, start, end, new)],
                    )
                )
    return mutants


_CONFIG = re.compile(r"(\w+)=config\.get\(\"(\w+)\", ([0-9.]+)\)")


def param_mutants(root: Path) -> list[Mutant]:
    """Every ``NAME=config.get("KEY", number)`` under a rule's ``params:``, changed."""
    text = (root / "Snakefile").read_text()
    mutants = []
    rule = None
    section = None
    for line in text.splitlines():
        found = re.match(r"^rule (\w+):", line)
        if found:
            rule = found.group(1)
        section_match = re.match(r"^    (\w+):\s*$", line)
        if section_match:
            section = section_match.group(1)
        m = _CONFIG.search(line)
        if m and rule and section == "params":
            name, key, number = m.groups()
            value: Any = float(number) * 1.5 if "." in number else int(number) + 1
            mutants.append(
                Mutant(
                    f"param {rule}.{name} -> {value}",
                    [f"param:{rule}.{name}"],
                    "param",
                    [],
                    {key: value},
                )  # fmt: skip
            )
    return mutants


def file_mutants(root: Path) -> list[Mutant]:
    """Every data file, the last number of its first data line (after any header) changed."""
    mutants = []
    for path in sorted((root / "data").iterdir()):
        text = path.read_text()
        body = text.find("\n") + 1 if not text[:1].isdigit() else 0
        end = text.find("\n", body)
        found = list(re.compile(r"\d+(\.\d+)?").finditer(text, body, end if end > 0 else len(text)))
        if not found:
            continue
        m = found[-1]
        new = str(round(float(m.group(0)) + 7.25, 3))
        name = f"data/{path.name}"
        mutants.append(
            Mutant(
                f"file {name}: {m.group(0)} -> {new}",
                [f"file:{name}"],
                "file",
                [(name, m.start(), m.end(), new)],
            )  # fmt: skip
        )
    return mutants


_YAML_NUMBER = re.compile(r"^(\s*)([A-Za-z_][\w-]*):\s*(-?[0-9]+(?:\.[0-9]+)?)\s*(#.*)?$")
_YAML_KEY = re.compile(r"^(\s*)([A-Za-z_][\w-]*):\s*(#.*)?$")


def config_mutants(root: Path, name: str = "config.yaml") -> list[Mutant]:
    """Every numeric leaf ``key: number`` of a block-style YAML config file, changed."""
    path = root / name
    if not path.is_file():
        return []
    text = path.read_text()
    lines = _offsets(text)
    mutants = []
    parents: list[tuple[int, str]] = []  # (indent, key) of the mappings enclosing a line
    for number, line in enumerate(text.splitlines()):
        leaf, block = _YAML_NUMBER.match(line), _YAML_KEY.match(line)
        found = leaf or block
        if found is None:
            continue
        indent = len(found.group(1))
        while parents and parents[-1][0] >= indent:
            parents.pop()
        if block is not None:
            parents.append((indent, block.group(2)))
            continue
        assert leaf is not None
        key = ".".join([*(k for _, k in parents), leaf.group(2)])
        old = leaf.group(3)
        new = repr(round(float(old) * 1.5 + 0.5, 6)) if "." in old else str(int(old) + 1)
        start = lines[number] + leaf.start(3)
        mutants.append(
            Mutant(
                f"config {key}: {old} -> {new}",
                [f"config:{key}"],
                "config",
                [(name, start, start + len(old), new)],
            )  # fmt: skip
        )
    return mutants
