"""What restoring a checkpoint would import and call, read from its pickle opcodes unloaded.

A record's ``type`` field is written by whoever wrote the record, so a reviewer cannot trust
it: a pickle that says ``builtins.int`` may well call ``os.system`` when loaded. The globals a
pickle imports are named in its opcodes (``GLOBAL``, ``STACK_GLOBAL``, ``INST``), which
:mod:`pickletools` lists without executing anything. ``STACK_GLOBAL`` takes its module and
name from the stack, so the stack is simulated (strings and memo entries only; anything else
is an unknown value); a global built from values that cannot be known is reported as such.

Pure: bytes in, names out. ``nbrewind trust`` shows the result for every checkpoint before it
asks to sign.
"""

import pickletools
from dataclasses import dataclass
from typing import Any, Optional

UNKNOWN_GLOBAL = "<a global computed at load time>"

_DANGEROUS_MODULES = (
    "os",
    "posix",
    "nt",
    "subprocess",
    "shutil",
    "socket",
    "ctypes",
    "importlib",
    "pickle",
    "_pickle",
    "marshal",
    "runpy",
    "pty",
    "sys",
    "code",
    "codeop",
    "webbrowser",
    "multiprocessing",
    "asyncio.subprocess",
)
_DANGEROUS_BUILTINS = {
    "eval",
    "exec",
    "compile",
    "__import__",
    "open",
    "breakpoint",
    "input",
    "getattr",  # reaches any attribute of anything, os.system through a harmless-looking module
    "setattr",
    "delattr",
    "globals",
    "vars",
}


@dataclass(frozen=True)
class CheckpointReview:
    """One checkpoint of one cell, as ``nbrewind trust`` shows it before signing."""

    cell: int
    """The cell's index in the notebook (markdown cells included)."""
    name: str
    kind: str
    recorded_type: str
    """The ``type`` the record claims: written by the record's author, not verified."""
    size: int
    imports: tuple[str, ...]
    """``module.name`` of every global restoring it imports (and may call)."""

    @property
    def dangerous(self) -> tuple[str, ...]:
        return tuple(g for g in self.imports if is_dangerous(g))


class _Mark:
    pass


_MARK = _Mark()
_UNKNOWN = object()


@dataclass(frozen=True)
class _Global:
    name: str


def is_dangerous(qualified: str) -> bool:
    """Globals that can run commands, load code or touch files when called by the unpickler."""
    if qualified.startswith("<imports module "):
        qualified = qualified[len("<imports module ") : -1] + ".*"
    elif qualified.startswith("<"):
        return True  # computed at load time, an extension code, or not a readable pickle
    module, _, name = qualified.rpartition(".")
    if module == "builtins":
        return name in _DANGEROUS_BUILTINS
    return any(module == m or module.startswith(m + ".") for m in _DANGEROUS_MODULES)


def pickle_globals(blob: bytes) -> tuple[str, ...]:
    """Every global a pickle would import, in order of first appearance, without loading it.

    A blob that is not a well-formed pickle yields ``<not a readable pickle: ...>``."""
    found: dict[str, None] = {}
    stack: list[Any] = []
    memo: dict[Any, Any] = {}
    try:
        for opcode, arg, _pos in pickletools.genops(blob):
            name = opcode.name
            if name in ("GLOBAL", "INST"):
                module, _, attr = str(arg).partition(" ")
                g = f"{module}.{attr}"
                found[g] = None
                _apply(opcode, stack)
                if name == "GLOBAL":
                    stack[-1] = _Global(g)
                continue
            if name == "STACK_GLOBAL":
                top: object = stack.pop() if stack else _UNKNOWN
                below: object = stack.pop() if stack else _UNKNOWN
                if isinstance(below, str) and isinstance(top, str):
                    g = f"{below}.{top}"
                else:
                    g = UNKNOWN_GLOBAL
                found[g] = None
                stack.append(_Global(g))
                continue
            if name.startswith("EXT"):
                found[f"<copyreg extension code {arg}>"] = None
                stack.append(_UNKNOWN)
                continue
            if name in ("MEMOIZE",):
                memo[len(memo)] = stack[-1] if stack else _UNKNOWN
                continue
            if name in ("PUT", "BINPUT", "LONG_BINPUT"):
                memo[arg] = stack[-1] if stack else _UNKNOWN
                continue
            if name in ("GET", "BINGET", "LONG_BINGET"):
                stack.append(memo.get(arg, _UNKNOWN))
                continue
            if name == "DUP":
                stack.append(stack[-1] if stack else _UNKNOWN)
                continue
            if isinstance(arg, str) and opcode.stack_after == [pickletools.pyunicode]:
                stack.append(arg)
                continue
            if isinstance(arg, str | bytes) and name in ("STRING", "BINSTRING", "SHORT_BINSTRING"):
                stack.append(arg if isinstance(arg, str) else arg.decode("latin-1"))
                continue
            _apply(opcode, stack)
    except Exception as e:  # noqa: BLE001 - any malformed input: say so, never guess
        found[f"<not a readable pickle: {type(e).__name__}: {e}>"] = None
    return tuple(found)


def _apply(opcode: Any, stack: list[Any]) -> None:
    """The generic stack effect of an opcode: pop what it consumes, push unknowns."""
    before = opcode.stack_before
    if pickletools.markobject in before:
        while stack and stack[-1] is not _MARK:
            stack.pop()
        if stack:
            stack.pop()  # the mark itself
        extra = before.index(pickletools.markobject)
    else:
        extra = len(before)
    for _ in range(extra):
        if stack:
            stack.pop()
    for item in opcode.stack_after:
        stack.append(_MARK if item is pickletools.markobject else _UNKNOWN)


def review_entry(
    cell: int, name: str, entry: dict[str, Any], blob: Optional[bytes]
) -> CheckpointReview:
    """The review of one write entry of a record (``blob``: its verified bytes, if any)."""
    kind = str(entry.get("kind", "?"))
    if blob is None:
        imports: tuple[str, ...] = ()
    elif kind == "module":
        imports = (f"<imports module {blob.decode('utf-8', 'replace')}>",)
    else:
        imports = pickle_globals(blob)
    return CheckpointReview(
        cell=cell,
        name=name,
        kind=kind,
        recorded_type=str(entry.get("type", "?")),
        size=len(blob) if blob is not None else 0,
        imports=imports,
    )


def format_review(reviews: list[CheckpointReview]) -> str:
    """The text ``nbrewind trust`` prints before asking."""
    lines = []
    for r in reviews:
        lines.append(
            f"cell {r.cell}, checkpoint {r.name!r} ({r.kind}, {r.size} bytes; the record says "
            f"type {r.recorded_type}, which is not checked):"
        )
        if not r.imports:
            lines.append("    imports nothing (plain data)")
            continue
        for g in r.imports:
            mark = "   <-- can run commands, load code or touch files" if is_dangerous(g) else ""
            lines.append(f"    imports {g}{mark}")
    return "\n".join(lines)
