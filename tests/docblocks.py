"""The fenced code blocks of the project's Markdown, their markers, and running them as written.

Every fenced block in a tracked Markdown file has a language (``text`` for output). A block
whose language is a shell one carries a marker on the line before its fence (issue 31):

    <!-- runnable -->                 run by tests/integration/docs/test_runnable_blocks.py
    <!-- runnable: OPTION; ... -->    the same, with options (below)
    <!-- illustration: REASON -->     not run; the reason says why and where a runnable one is
    <!-- test-command: ... -->        the README's test command: .ci/run runs it verbatim

Which languages are shell ones is not a list written here: it is every lexer that Pygments
(the highlighter the docs site renders with) defines in ``pygments.lexers.shell``, so a block
tagged ``zsh`` or ``fish`` needs a marker as ``bash`` does, and an unknown tag fails.

A runnable block runs in a fresh copy of the repository (the tracked files, as a clone has
them), with a fresh ``HOME``, from the repository's root, under ``bash`` with ``set -eo
pipefail``, in the environment that the README's first command made (itself a runnable block,
marked ``sets up``). Options:

- ``new venv``: in a new, empty virtual environment instead (install commands).
- ``sets up``: this block's environment is the one other blocks run in (exactly one).
- ``continues``: after the previous runnable block of the same file, in the same shell (its
  directory, variables and files); the two are one test.
- ``in DIR``: start in DIR (relative to the repository's root); ``in a new directory``: in an
  empty directory outside the copy.
- ``creates PATH``: the block must leave PATH (relative to where it started) behind.
- ``prints TEXT``: its output must contain TEXT.
- ``slurm``: needs the local Slurm cluster (skipped without it, failed in CI).

``<!-- file: NAME -->`` before a non-shell block writes that block, as written, to NAME in
the start directory of the next runnable block of the same file (the quickstart's
two-file template).
"""

import inspect
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
MARKER = re.compile(
    r"^\s*<!--\s*(?P<kind>runnable|illustration|test-command|file)(?::\s*(?P<arg>.*?))?\s*-->\s*$"
)
OPTIONS = ("new venv", "sets up", "continues", "in ", "creates ", "prints ", "slurm")
BARE = ("in", "creates", "prints")  # options that need an argument
# Variables of the test run that a user's fresh shell would not have.
DROPPED_ENV = ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "JUPYTER_PATH", "JUPYTER_CONFIG_DIR")
DROPPED_PREFIXES = ("STICKY_", "NBREWIND_", "DISTEA_", "SNAKEMAKE_", "PYTEST_", "HYPOTHESIS_")


def shell_languages() -> set[str]:
    """Every alias of every lexer Pygments defines in its shell module."""
    import pygments.lexers.shell as shell

    names: set[str] = set()
    for name in shell.__all__:
        lexer = getattr(shell, name)
        if inspect.isclass(lexer):
            names.update(lexer.aliases)
    return names


def known_language(lang: str) -> bool:
    """Whether Pygments knows ``lang``, or it is ``snakemake`` (Snakemake's own name for its
    files, which pymdownx.highlight renders as plain text)."""
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    if lang == "snakemake":
        return True
    try:
        get_lexer_by_name(lang)
    except ClassNotFound:
        return False
    return True


@dataclass
class Block:
    file: str  # relative to the repository's root
    line: int  # of the opening fence, 1-based
    lang: str
    text: str
    marker: Optional[str] = None  # runnable, illustration, test-command, file
    arg: str = ""

    @property
    def id(self) -> str:
        return f"{self.file}:{self.line}"

    def options(self) -> list[str]:
        return (
            [o.strip() for o in self.arg.split(";") if o.strip()]
            if self.marker == "runnable"
            else []
        )

    def commands(self) -> str:
        """The block as a shell script: a console block's ``$ `` lines (and their ``> ``
        continuations) when it has any, else every line."""
        lines = self.text.splitlines()
        if self.lang in ("console", "shell-session") and any(ln.startswith("$ ") for ln in lines):
            keep = [ln[2:] for ln in lines if ln.startswith(("$ ", "> "))]
            return "\n".join(keep) + "\n"
        return self.text


def markdown_files() -> list[str]:
    """Every tracked Markdown file (a clone's), relative to the repository's root."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--", "*.md"], cwd=REPO, capture_output=True, check=True
    ).stdout.decode()
    return sorted(p for p in out.split("\0") if p and (REPO / p).is_file())


def blocks(path: str, text: Optional[str] = None) -> list[Block]:
    """The fenced blocks of one Markdown file (``text``, else the file under the repository's
    root), each with the marker on the nearest non-blank line above its fence (if that line is
    a marker)."""
    lines = ((REPO / path).read_text() if text is None else text).splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence = len(m["indent"]), m["fence"]
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith(fence):
            j += 1
        body = "\n".join(ln[indent:] if ln[:indent].isspace() else ln for ln in lines[i + 1 : j])
        block = Block(path, i + 1, m["info"].strip().split(" ")[0], body + "\n" if body else "")
        k = i - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        mark = MARKER.match(lines[k]) if k >= 0 else None
        if mark:
            block.marker, block.arg = mark["kind"], (mark["arg"] or "").strip()
        found.append(block)
        i = j + 1
    return found


def every_block() -> list[Block]:
    return [b for path in markdown_files() for b in blocks(path)]


def problems(block: Block, shells: set[str]) -> list[str]:
    """Why a block's language or marker is not acceptable (empty when it is)."""
    where = block.id
    if not block.lang:
        return [
            f"{where}: a fenced block without a language: tag it (text for output, bash for "
            "commands)"
        ]
    if not known_language(block.lang):
        return [f"{where}: language {block.lang!r} is not one Pygments knows"]
    if block.lang in shells:
        if block.marker in ("runnable", "illustration", "test-command"):
            if block.marker == "illustration" and not block.arg:
                return [f"{where}: an illustration says why: <!-- illustration: REASON -->"]
            bad = [o for o in block.options() if not o.startswith(OPTIONS) or o in BARE]
            return [
                f"{where}: unknown runnable option {o!r} (options: {', '.join(OPTIONS)})"
                for o in bad
            ]
        return [
            f"{where}: a {block.lang} block needs <!-- runnable --> (a test runs it) or "
            "<!-- illustration: REASON --> on the line before its fence"
        ]
    if block.marker not in (None, "file"):
        return [f"{where}: a {block.marker} marker on a {block.lang} block (only shell blocks run)"]
    if block.marker == "file" and not block.arg:
        return [f"{where}: <!-- file: NAME --> names the file"]
    return []


@dataclass
class Chain:
    """Runnable blocks that run as one script: a block and those that continue it."""

    blocks: list[Block]
    files: dict[str, str] = field(default_factory=dict)  # NAME -> content

    @property
    def id(self) -> str:
        return self.blocks[0].id

    def option(self, prefix: str) -> list[str]:
        return [
            o[len(prefix) :].strip()
            for b in self.blocks
            for o in b.options()
            if o.startswith(prefix)
        ]

    def has(self, option: str) -> bool:
        return any(option in b.options() for b in self.blocks)


def chains(all_blocks: Optional[list[Block]] = None) -> list[Chain]:
    """Every runnable chain, in file order."""
    out: list[Chain] = []
    by_file: dict[str, list[Block]] = {}
    for b in every_block() if all_blocks is None else all_blocks:
        by_file.setdefault(b.file, []).append(b)
    for file_blocks in by_file.values():
        pending: dict[str, str] = {}
        last: Optional[Chain] = None
        for b in file_blocks:
            if b.marker == "file":
                pending[b.arg] = b.text
            elif b.marker == "runnable":
                if "continues" in b.options() and last is not None:
                    last.blocks.append(b)
                    last.files.update(pending)
                else:
                    last = Chain([b], dict(pending))
                    out.append(last)
                pending = {}
    return out


@dataclass
class Result:
    chain: Chain
    returncode: int
    output: str
    copy: Path  # the fresh copy of the repository (the new directory, for one)
    start: Path  # where the chain started
    venv: Path


def fresh_copy(dest: Path) -> Path:
    """The tracked files of this checkout, as they are in the working tree, under ``dest``."""
    out = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True
    ).stdout
    dest.mkdir(parents=True)
    for rel in out.decode().split("\0"):
        src = REPO / rel
        if rel and (src.is_file() or src.is_symlink()):
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target, follow_symlinks=False)
    return dest


def script(chain: Chain) -> str:
    parts = ["set -eo pipefail"]
    for b in chain.blocks:
        parts.append(f"echo '[docs] block {b.id}' >&2")
        parts.append(b.commands().rstrip("\n"))
    return "\n".join(parts) + "\n"


class Sandbox:
    """One pytest session's runs of documented blocks: fresh copies, a fresh HOME, one new venv
    per ``new venv`` chain, and each chain run at most once (the packaging test and the blocks
    test share the quickstart's install)."""

    def __init__(self, root: Path):
        self.root = root
        self.home = root / "home"
        self.home.mkdir(parents=True, exist_ok=True)
        self.results: dict[str, Result] = {}
        self.count = 0

    def env(self, venv: Path) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in DROPPED_ENV and not k.startswith(DROPPED_PREFIXES)
        }
        env["HOME"] = str(self.home)
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
        env["VIRTUAL_ENV"] = str(venv)
        env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
        for xdg in ("XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR"):
            env.pop(xdg, None)
        return env

    def new_venv(self) -> Path:
        self.count += 1
        venv = self.root / f"venv{self.count}"
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        return venv

    def setup_chain(self) -> Chain:
        found = [c for c in chains() if c.has("sets up")]
        assert len(found) == 1, f"exactly one runnable block sets up the environment: {found}"
        return found[0]

    def project_venv(self) -> Path:
        """The environment the README's first command made (run once)."""
        result = self.run(self.setup_chain())
        assert result.returncode == 0, failure(result)
        return result.venv

    def run(self, chain: Chain, timeout: int = 1500) -> Result:
        if chain.id in self.results:
            return self.results[chain.id]
        venv = (
            self.new_venv()
            if chain.has("new venv") or chain.has("sets up")
            else self.project_venv()
        )
        self.count += 1
        where = chain.option("in ")
        if where == ["a new directory"]:  # no copy of the repository needed
            copy = start = self.root / f"dir{self.count}"
            start.mkdir()
        else:
            copy = fresh_copy(self.root / f"copy{self.count}")
            start = copy / where[0] if where else copy
        for name, content in chain.files.items():
            (start / name).parent.mkdir(parents=True, exist_ok=True)
            (start / name).write_text(content)
        try:
            done = subprocess.run(
                ["bash", "-c", script(chain)],
                cwd=start,
                env=self.env(venv),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=timeout,
            )
            code, output = done.returncode, done.stdout
        except subprocess.TimeoutExpired as exc:
            out = exc.output
            text = out.decode(errors="replace") if isinstance(out, bytes) else (out or "")
            code, output = -9, text + f"\n[docs] timed out after {timeout} s"
        result = Result(chain, code, output, copy, start, venv)
        self.results[chain.id] = result
        return result


def failure(result: Result) -> str:
    """Which block failed, and the end of the output."""
    running = re.findall(r"^\[docs\] block (\S+)$", result.output, re.MULTILINE)
    at = running[-1] if running else result.chain.id
    return (
        f"the documented block at {at} failed (exit {result.returncode}), started in "
        f"{result.start} (a fresh copy of the repository: {result.copy}):\n"
        f"{result.output[-4000:]}"
    )
