"""Provenance keys of Snakemake jobs, for checkpoint-aware rule skipping.

A job's key is a hash over named *components* that describe the job as Snakemake executes it
(issue 26): a ``shell:`` job's command exactly as ``shell()`` runs it (formatted, with the
shell prefix, suffix and executable); for a ``run:`` block, everything it can run
(:mod:`._codekey` follows functions, classes, globals, closures, defaults and workflow-local
modules); a script's content and the workflow-local modules and packages it imports; a local
wrapper's files; the job's inputs, outputs and logs in order and by name; threads and
resources; each param and wildcard; the config values the job reads from the config its
module sees (or all of it); every input's content and permission bits; the sticky template's
code; the software environment (conda env file, container URL, environment modules) and the
key schema version (:data:`KEY_SCHEMA`: a change of this algorithm never reuses old keys).
:data:`KEYWORD_COVERAGE` classifies every keyword of Snakemake's grammar. Paths inside the
working directory count relative to it, and mtimes and host names are not part of the key, so
the same job has the same key at another site. A path outside the working directory counts by
its absolute path (two different files never share a name), or relative to a declared site
root (``data=/data`` at site A, ``data=/scratch/data`` at site B).

A job whose key would miss something it depends on gets no key at all
(:class:`Uncacheable`): a param without a stable representation (an object whose ``repr``
shows its address, or is truncated), a ``run:`` block reaching such a value, a ``cwl:`` rule,
or an output outside the working directory (a restore writes only inside it). It runs, and
the caller says why in one line.

Inputs count by content: a job whose upstream reran but produced byte-identical files keeps
its key, and is restored (an "early cutoff"). The components are kept with each checkpoint,
so a rerun can be explained by the components that changed ("params:alpha changed").
"""

import ast
import json
import os
import re
import shlex
import string
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional

from ckptstore import file_digest, kept_mode

from ._codekey import (
    CodeFollower,
    Unfollowable,
    files_under,
    python_tree_digest,
    reduce_parts,
    sha256_hex,
    source_imports,
)

WHOLE_CONFIG = "config"
"""The component name used when a job's config reads cannot be known."""

KEY_SCHEMA = "4"
"""The version of the key algorithm, a component of every key: bump it whenever what a
component means changes, so no key computed the old way is ever reused."""

OUTSIDE = "<outside>"

_ADDRESS = re.compile(r"<[^<>]* at 0x[0-9a-fA-F]+>")
_ADDRESS_ONLY = re.compile(r" at 0x[0-9a-fA-F]+")
"""An object's default repr (``<function f at 0x7f...>``): different in every process."""


KEYWORD_COVERAGE: dict[str, dict[str, str]] = {
    # Rule keywords (snakemake.parser.rule_property_subautomata and rule_run_subautomata).
    "rule": {
        "name": "key: rule (a renamed rule's jobs run once under the new name)",
        "input": "key: input:PATH (content and mode) and io:input (names, order)",
        "output": "key: io:output (names, order); restored as stored",
        "params": "key: params:NAME (canonical text of each value)",
        "threads": "key: threads (as the job gets them: min(threads, --cores))",
        "resources": "key: resources:NAME (all but tmpdir and the run's _cores/_nodes)",
        "retries": "not in the key: a retry reruns the same job",
        "priority": "not in the key: scheduling order only",
        "log": "key: io:log (names, order); restored with the outputs",
        "message": "not in the key: printed only",
        "benchmark": "key: io:benchmark (its path, inside the working directory)",
        "conda": "key: software:conda (the env file's content)",
        "singularity": "key: software:container (the image URL as written)",
        "container": "key: software:container (the image URL as written)",
        "containerized": "key: software:container (the image URL as written)",
        "envmodules": "key: software:envmodules (the module names)",
        "wildcard_constraints": "not in the key: decides which jobs exist, not what they do",
        "shadow": "not in the key: where a job runs, not what it writes",
        "group": "not restorable: group jobs always run",
        "cache": "not in the key: Snakemake's own between-workflow cache",
        "handover": "key: through threads (a handover job takes every core)",
        "default_target": "not in the key: which target a bare run builds",
        "localrule": "not in the key: where the job runs",
        "pathvars": "key: through the paths they expand to (io:*, input:PATH)",
        "run": "key: code:run-reach (every function, class, global, closure, default and "
        "workflow-local module the block reaches), the whole config, shell-settings",
        "shell": "key: command (the formatted command with prefix, suffix and executable)",
        "script": "key: script:PATH (content), module:NAME.py / NAME/ (local imports)",
        "notebook": "key: script:PATH (the notebook's content), the whole config",
        "wrapper": "key: code:wrapper (its name); a local wrapper's files (code:wrapper-files)",
        "template_engine": "key: code:template-engine and the template (an input)",
        "cwl": "uncacheable: a CWL tool's files are not followed; its jobs always run",
    },
    # Global keywords (snakemake.parser.Python.subautomata).
    "global": {
        "envvars": "not covered: the variables' values (often secrets) are not in the key; "
        "a job whose output depends on one reruns only if something else changed",
        "include": "key: through the rules and code it defines",
        "workdir": "key: paths count relative to the working directory",
        "configfile": "key: config:KEY for each key a job reads, else the whole config",
        "pathvars": "key: through the paths they expand to",
        "pepfile": "key: through the params and inputs taken from the PEP; a run: block "
        "reaching the pep object is followed, or uncacheable",
        "pepschema": "not in the key: validation only",
        "report": "not in the key: the report, not the jobs",
        "ruleorder": "not in the key: decides which rule makes a file",
        "rule": "key: see the rule keywords",
        "checkpoint": "not restorable: Snakemake checkpoint jobs always run",
        "localrules": "not in the key: where jobs run",
        "onsuccess": "not a job: runs after the workflow",
        "onerror": "not a job: runs after a failure",
        "onstart": "not a job: runs before the workflow (its side effects are not keyed)",
        "wildcard_constraints": "not in the key: decides which jobs exist",
        "singularity": "key: software:container",
        "container": "key: software:container",
        "containerized": "key: software:container",
        "conda": "key: software:conda",
        "scattergather": "key: through the paths it splits into",
        "inputflags": "key: through the flags of each input (io:input)",
        "outputflags": "key: through the flags of each output (io:output: protected() "
        "changes its mode)",
        "storage": "key: inputs by the content of their local copies (not tested here with "
        "a remote provider)",
        "resource_scopes": "not in the key: scheduling only",
        "module": "key: see the module keywords",
        "use": "key: the rules it makes are keyed as any rule",
    },
    # Module keywords (snakemake.parser.Module.subautomata).
    "module": {
        "name": "key: rule (the rules' names carry the module's prefix)",
        "snakefile": "key: through the rules and code it defines",
        "meta_wrapper": "key: through the wrappers it names",
        "config": "key: the config the module's rules see (config:KEY or the whole config)",
        "skip_validation": "not in the key: validation only",
        "replace_prefix": "key: through the paths it rewrites",
        "prefix": "key: through the paths it rewrites",
        "pathvars": "key: through the paths they expand to",
    },
}
"""How the key covers every keyword of Snakemake's grammar (the installed parser's keyword
tables are the list: ``test_keyword_coverage`` fails on a keyword classified nowhere).
``docs/checkpoints.md`` shows this table."""


class Uncacheable(Exception):
    """The job cannot get a key that covers what it depends on (the message says why)."""


_sha = sha256_hex


class Unrepresentable(ValueError):
    """A value has no stable text form (its repr shows an address or is truncated)."""


def stable_repr(value: Any, _depth: int = 0) -> str:
    """A text form of a param or config value that is the same in every process and changes
    whenever the value does; :class:`Unrepresentable` if there is none.

    Containers are walked in their order (a dict's insertion order counts: iterating it is
    what a job sees), sets in sorted order (their iteration order is the hash seed's, not
    the workflow's); numpy-like arrays count by dtype, shape and bytes; classes, functions
    and enum members by qualified name; any other object by what pickle would rebuild it from
    (:func:`reduce_parts`: its class and its whole state, so a ``repr`` that leaves a field
    out, or a ``repr=False`` dataclass field, cannot hide a change). An object pickle cannot
    describe (a lock, an open file) has no stable form."""
    if _depth > 64:
        raise Unrepresentable(f"{type(value).__name__} value nested more than 64 levels deep")
    inner = _depth + 1
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return repr(value) if type(value) in _PLAIN else f"{_qualname(type(value))}:{value!r}"
    if isinstance(value, (list, tuple)):
        return f"{_qualname(type(value))}[{', '.join(stable_repr(v, inner) for v in value)}]"
    if isinstance(value, (set, frozenset)):
        items = sorted(stable_repr(v, inner) for v in value)
        return f"{_qualname(type(value))}{{{', '.join(items)}}}"
    if isinstance(value, dict):
        items = [f"{stable_repr(k, inner)}: {stable_repr(v, inner)}" for k, v in value.items()]
        return f"{_qualname(type(value))}{{{', '.join(items)}}}"
    if isinstance(value, os.PathLike):
        return f"path:{os.fspath(value)!r}"
    if isinstance(value, type):
        return f"class:{_qualname(value)}"
    if callable(value) and hasattr(value, "__qualname__"):
        name = _qualname(value)
        if "<lambda>" in name or "<locals>" in name:
            # closures and lambdas share names: only their code and cells tell them apart
            raise Unrepresentable(f"function {name} (a lambda or closure: no stable name)")
        return f"name:{name}"
    tobytes = getattr(value, "tobytes", None)
    if callable(tobytes) and hasattr(value, "dtype") and hasattr(value, "shape"):
        return f"array:{value.dtype}:{tuple(value.shape)}:{_sha(tobytes())}"
    rebuild, parts = reduce_parts(value, Unrepresentable)
    return (
        f"{_qualname(type(value))}<{rebuild}>("
        + ", ".join(stable_repr(part, inner) for part in parts)
        + ")"
    )


_PLAIN = (type(None), bool, int, float, complex, str, bytes)


def _qualname(obj: Any) -> str:
    return f"{getattr(obj, '__module__', None)}.{getattr(obj, '__qualname__', type(obj).__name__)}"


def _value_sha(value: Any) -> str:
    return _sha(stable_repr(value))


def tree_digest(entries: dict[str, str]) -> str:
    """The digest of a directory from its files' digests (relative path -> digest)."""
    return "tree:" + _sha("\n".join(f"{rel}={d}" for rel, d in sorted(entries.items())))


def _moded(digest: str, mode: Any) -> str:
    """A file's or folder's digest with its permission bits (``cp -p`` copies them)."""
    return f"{digest}:m{int(mode):o}"


def entry_digest(entry: dict[str, Any]) -> Optional[str]:
    """The digest :meth:`InputDigests.digest` will give an output once a manifest entry is
    restored; None where only the disk can say (a link: its target's content; an entry
    stored without its modes)."""
    if "file" in entry:
        return _moded(str(entry["file"]), entry["mode"]) if "mode" in entry else None
    if "tree" not in entry or entry.get("links"):
        return None
    entries = _tree_entries(entry)
    return None if entries is None else tree_digest(entries)


def _tree_entries(entry: dict[str, Any]) -> Optional[dict[str, str]]:
    """A stored directory's files and folders as :meth:`InputDigests.digest` names them
    (links left out); None if a mode is missing."""
    modes = entry.get("modes", {})
    tree, dirs = entry.get("tree", {}), entry.get("dirs", ())
    if "." not in modes or any(r not in modes for r in (*tree, *dirs)):
        return None
    entries = {rel: _moded(d, modes[rel]) for rel, d in tree.items()}
    entries.update({f"{d}/": _moded("dir", modes[d]) for d in dirs})
    entries["./"] = _moded("dir", modes["."])
    return entries


def planned_digest(entry: dict[str, Any], full: str, digests: "InputDigests") -> Optional[str]:
    """The digest an output at ``full`` will have once ``entry`` is restored, for a plan
    (nothing placed): :func:`entry_digest`, and for links the content they will lead to (on
    disk, or assumed for an output the plan restores). None where only a restore can say (a
    link to a missing file, or to a folder or link inside its own directory output)."""
    digest = entry_digest(entry)
    if digest is not None:
        return digest
    if "link" in entry:
        try:
            return f"link:{entry['link']}:" + digests.digest(_link_target(full, entry["link"]))
        except OSError:
            return None
    links = entry.get("links", {})
    entries = _tree_entries(entry)
    if entries is None:
        return None
    root = os.path.abspath(full)
    for rel, target in links.items():
        where = _link_target(os.path.join(root, rel), target)
        if where.startswith(root + os.sep):
            inner = os.path.relpath(where, root)
            if inner in links or inner in entry.get("dirs", ()):
                return None
            content = entries.get(inner, "dangling")
        else:
            try:
                content = digests.digest(where)
            except OSError:
                content = "dangling"
        entries[rel] = f"link:{target}:{content}"
    return tree_digest(entries)


def _link_target(link: str, target: str) -> str:
    return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(link)), target))


class InputDigests:
    """Content digests of input files, cached by (path, size, mtime) for the whole run.

    ``assume`` registers the digest a file *will* have (a job that would be restored), so a
    plan can compute downstream keys without copying anything."""

    def __init__(self) -> None:
        self._cache: dict[tuple[str, int, int], str] = {}
        self._assumed: dict[str, str] = {}

    def assume(self, path: str, digest: str) -> None:
        self._assumed[os.path.abspath(path)] = digest

    def digest(self, path: str) -> str:
        """A file by content and mode, a directory by everything in it; a symbolic link also
        by its target's name (a job may read the name: ``readlink``, ``realpath``)."""
        if os.path.islink(path) and os.path.abspath(path) not in self._assumed:
            return f"link:{os.readlink(path)}:" + self._content(path)
        return self._content(path)

    def _content(self, path: str) -> str:
        assumed = self._assumed.get(os.path.abspath(path))
        if assumed is not None:
            return assumed
        if os.path.isdir(path):
            # Everything a restore puts back counts: files by content and mode, every
            # subdirectory (empty ones too) and the folder itself by mode, links by target
            # (and the content they lead to).
            entries = {"./": _moded("dir", kept_mode(os.stat(path).st_mode))}
            for root, dirs, files in os.walk(path):
                for name in dirs + files:
                    full = os.path.join(root, name)
                    rel = os.path.relpath(full, path)
                    if os.path.islink(full):
                        content = self._content(full) if os.path.exists(full) else "dangling"
                        entries[rel] = f"link:{os.readlink(full)}:{content}"
                    elif os.path.isdir(full):
                        entries[rel + "/"] = _moded("dir", kept_mode(os.stat(full).st_mode))
                    else:
                        entries[rel] = self.digest(full)
            return tree_digest(entries)
        st = os.stat(path)
        key = (os.path.abspath(path), st.st_size, st.st_mtime_ns)
        if key not in self._cache:
            self._cache[key] = file_digest(Path(path))
        return _moded(self._cache[key], kept_mode(st.st_mode))


def script_search_folders(script_folder: Path, workflow_folders: list[str]) -> list[Path]:
    """Where a local ``script:`` job's imports are found, in Python's order: Snakemake hands
    the script its own ``sys.path`` (the folders of the Snakefile and of each included file
    first, then what the Snakefile added), and appends the script's folder last, so a module
    beside the Snakefile shadows one beside the script. Only folders inside the workflow's
    (``workflow_folders``) and the script's own: what else is on ``sys.path`` (the Python
    installation, ``PYTHONPATH``, editable installs) counts by name, as installed."""
    roots = [os.path.abspath(f).rstrip(os.sep) + os.sep for f in workflow_folders]
    found: list[Path] = []
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue
        full = os.path.abspath(entry)
        if any((full + os.sep).startswith(root) for root in roots) and Path(full) not in found:
            found.append(Path(full))
    mine = Path(os.path.abspath(script_folder))
    return found if mine in found else [*found, mine]


def local_imports(source: str, search: list[Path], depth: int = 1000) -> dict[str, str]:
    """Workflow-local code a Python source imports (transitively): name -> content sha.

    A flat module ``NAME.py`` in a ``search`` folder counts by its content (and what it
    imports, in turn); a package ``NAME/`` (with or without ``__init__.py``) by every ``.py``
    file in it (``NAME/``), whatever of it is imported, and what those files import. A source
    that imports by a computed name (``importlib.import_module(x)``, ``__import__``,
    ``runpy``, a loader from a file path) counts every ``.py`` file under the search folders
    (``*``). Installed packages are the software environment's business."""
    found: dict[str, str] = {}
    pending = [(source, depth)]
    while pending:
        text, level = pending.pop()
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        names, dynamic = source_imports(tree)
        if dynamic and "*" not in found:
            # by position, not path: the same folders have other paths at another site
            found["*"] = _sha(
                "\n".join(
                    f"{i}={python_tree_digest(f)}"
                    for i, f in enumerate(map(Path, search))
                    if f.is_dir()
                )
            )
        for name in sorted(names):
            for folder in search:
                flat, package = folder / f"{name}.py", folder / name
                if f"{name}.py" not in found and flat.is_file():
                    content = flat.read_text(errors="replace")
                    found[f"{name}.py"] = _sha(content)
                    if level > 1:
                        pending.append((content, level - 1))
                    break
                if f"{name}/" not in found and package.is_dir() and _is_package(package):
                    found[f"{name}/"] = python_tree_digest(package)
                    if level > 1:
                        for py in sorted(package.rglob("*.py")):
                            pending.append((py.read_text(errors="replace"), level - 1))
                    break
    return found


def _is_package(folder: Path) -> bool:
    """A folder Python can import: a regular package, or a namespace package (``.py`` files
    and no ``__init__.py``)."""
    return (folder / "__init__.py").is_file() or any(folder.glob("*.py"))


def script_config_reads(source: str) -> Optional[set[str]]:
    """The top-level config keys a Python rule script reads, or None if that is unknowable.

    Knowable means every use of the injected ``snakemake`` object is an attribute access and
    every use of ``snakemake.config`` is ``snakemake.config["KEY"]`` or
    ``snakemake.config.get("KEY", ...)`` with a constant key. Passing ``snakemake`` or its
    config anywhere else (to a helper, into a loop) could read anything: the whole config
    counts then. The one exception is ``stickyinvoc.state(snakemake)`` (or ``state`` imported
    from ``stickyinvoc``): it reads only the job's ``sticky`` resource."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    parent: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parent[child] = node
    is_state = _state_calls(tree)
    keys: set[str] = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and node.id == "snakemake"):
            continue
        attr = parent.get(node)
        holder = parent.get(attr) if isinstance(attr, ast.keyword) else attr
        if isinstance(holder, ast.Call) and holder.func is not node and is_state(holder):
            continue  # state(snakemake): reads resources.sticky, no config
        if not isinstance(attr, ast.Attribute):
            return None  # the object itself escapes
        if attr.attr != "config":
            continue
        use = parent.get(attr)
        if (
            isinstance(use, ast.Subscript)
            and use.value is attr
            and isinstance(use.slice, ast.Constant)
            and isinstance(use.slice.value, str)
        ):
            keys.add(use.slice.value)
            continue
        call = parent.get(use) if isinstance(use, ast.Attribute) else None
        if (
            isinstance(use, ast.Attribute)
            and use.attr == "get"
            and isinstance(call, ast.Call)
            and call.func is use
            and call.args
            and isinstance(call.args[0], ast.Constant)
            and isinstance(call.args[0].value, str)
        ):
            keys.add(call.args[0].value)
            continue
        return None
    return keys


def _state_calls(tree: ast.AST) -> "Callable[[ast.Call], bool]":
    """A test for calls of ``stickyinvoc.state`` under the names this source imports it as."""
    modules, functions = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules |= {a.asname or a.name for a in node.names if a.name == "stickyinvoc"}
        elif isinstance(node, ast.ImportFrom) and node.module == "stickyinvoc" and not node.level:
            functions |= {a.asname or a.name for a in node.names if a.name == "state"}

    def test(call: ast.Call) -> bool:
        func = call.func
        if isinstance(func, ast.Name):
            return func.id in functions
        return (
            isinstance(func, ast.Attribute)
            and func.attr == "state"
            and isinstance(func.value, ast.Name)
            and func.value.id in modules
        )

    return test


def shell_config_reads(shellcmd: str) -> Optional[set[str]]:
    """The top-level config keys a shell command's ``{config[KEY]}`` fields read."""
    keys: set[str] = set()
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(shellcmd) if f]
    except ValueError:
        return None
    for field in fields:
        if field == "config" or field.startswith("config.") and "[" in field:
            return None
        if field.startswith("config["):
            keys.add(field[len("config[") :].split("]", 1)[0].strip("'\""))
        elif field.startswith("config."):
            keys.add(field[len("config.") :].split(".", 1)[0])
    return keys


def relative_path(path: str, workdir: Path, roots: "dict[str, str] | None" = None) -> str:
    """A path as the key sees it: relative to the working directory; else relative to the
    longest declared site root that holds it (``<data>/run1/x.csv``); else its whole
    absolute path (``<outside>/data/run1/x.csv``). Different files never share a name."""
    absolute = os.path.abspath(path)
    root = str(workdir).rstrip(os.sep) + os.sep
    if absolute.startswith(root):  # string operations: this runs for every file of every job
        return absolute[len(root) :]
    for name, folder in sorted((roots or {}).items(), key=lambda r: -len(r[1])):
        prefix = folder.rstrip(os.sep) + os.sep
        if absolute.startswith(prefix):
            return f"<{name}>/{absolute[len(prefix) :]}"
    return OUTSIDE + absolute


def parse_site_roots(text: Optional[str]) -> dict[str, str]:
    """``NAME=/path,NAME2=/other`` (``--sticky-checkpoints-roots``) as name -> absolute
    folder; ValueError naming the bad entry."""
    roots: dict[str, str] = {}
    for item in filter(None, (part.strip() for part in (text or "").split(","))):
        name, sep, folder = item.partition("=")
        name = name.strip()
        if not sep or not name.isidentifier() or not folder.strip():
            raise ValueError(
                f"site root {item!r} is not NAME=/path (e.g. data=/scratch/data); NAME is a "
                "word, the same at every site, and the path where it lies at this site"
            )
        if name in roots or name == OUTSIDE.strip("<>"):
            raise ValueError(f"site root name {name!r} is used twice or reserved")
        roots[name] = os.path.abspath(os.path.expanduser(folder.strip()))
    return roots


class KeyComputer:
    """Computes the provenance components of a run's jobs.

    What all jobs of a rule share (its code, the modules its script imports, which config keys
    it reads) is computed once per rule and script, not per job: keys must stay cheap next to
    the jobs themselves."""

    def __init__(
        self,
        workflow: Any,
        workdir: Path,
        templates_file: Optional[Path],
        roots: "dict[str, str] | None" = None,
    ) -> None:
        self.workflow = workflow
        self.workdir = workdir
        self.roots = dict(roots or {})
        # The workflow's own files (scripts, data beside the Snakefile) where the working
        # directory is elsewhere (--directory): the same name at every site.
        self.roots.setdefault("workflow", os.path.abspath(workflow.basedir))
        self.digests = InputDigests()
        self.config = workflow.config
        self.whole_config = _config_sha(workflow.config, WHOLE_CONFIG)
        self.templates: dict[str, str] = {}
        if templates_file is not None and templates_file.is_file():
            source = templates_file.read_bytes()
            self.templates["template"] = _sha(source)
            folders = [templates_file.parent, Path(workflow.basedir)]
            for module, sha in local_imports(source.decode(errors="replace"), folders).items():
                self.templates[f"template-module:{module}"] = sha
        self._code: dict[
            tuple[str, str], tuple[dict[str, str], Optional[set[str]]] | Uncacheable
        ] = {}
        local_dirs = {os.path.abspath(workflow.basedir), os.path.abspath(workdir)}
        local_dirs |= {
            os.path.abspath(getattr(m, "basedir", workflow.basedir))
            for m in getattr(workflow, "modules", {}).values()
            if isinstance(getattr(m, "basedir", None), str)
        }
        # The config a run: block reads counts as the config component (the whole config
        # of its module), not again inside code:run-reach.
        configs = [workflow.config, *(_rule_configs(workflow))]
        known = {id(c): "config: counted as the config component" for c in configs}
        self.follower = CodeFollower(sorted(local_dirs), stable_repr, known)
        self._initial_env = initial_environment()
        self._process_cache: dict[str, Optional[str]] = {}
        self._state_cache: Optional[dict[str, str]] = None
        names = [(str(workdir), "<wd>"), (tempfile.gettempdir(), "<tmp>")]
        names += [(folder, f"<{name}>") for name, folder in self.roots.items()]
        self._path_names: dict[str, str] = {}
        self._site_names = sorted(
            ((os.path.abspath(f).rstrip(os.sep), n) for f, n in names if f),
            key=lambda item: -len(item[0]),
        )

    def path(self, path: str) -> str:
        """A path's name in keys and manifests (see :func:`relative_path`); remembered: a
        job's files are named several times (its key, its identity, what it may restore, its
        downstream jobs' inputs), and a ``run:`` block that changes the working directory
        does not change them."""
        name = self._path_names.get(path)
        if name is None:
            name = self._path_names[path] = relative_path(path, self.workdir, self.roots)
        return name

    def components(self, job: Any, template: Optional[str]) -> dict[str, str]:
        """The named parts of a job's provenance, each a short, comparable value: the job
        as Snakemake executes it (see :mod:`docs/checkpoints.md`).

        Raises :class:`Uncacheable` if the job cannot have a key that covers it."""
        rule = job.rule
        code, config_keys = self._code_of(job)
        comps: dict[str, str] = {"schema": KEY_SCHEMA, "rule": rule.name, **code}
        command = self._command(job)
        if command is not None:
            comps["command"] = _sha(command)
            declared = {self.path(str(f)) for f in [*job.input, *job.output, *job.log]}
            comps.update(self._command_files(job.shellcmd, declared))
        environment = self._environment()
        if environment is not None:
            comps["environment"] = environment
        umask = self._umask()
        if umask is not None:
            comps["umask"] = umask
        interpreter = self._interpreter()
        if interpreter is not None:
            comps["interpreter"] = interpreter
        if getattr(rule, "is_run", False) and not getattr(rule, "shellcmd", None):
            comps.update(self._process_state())
        for name, value in job.params.items():
            comps[f"params:{name}"] = self._param_digest(rule.name, name, value)
        if len(job.params) > len(job.params.keys()):  # positional params have no names
            comps["params"] = _sha(
                "\n".join(
                    self._param_digest(rule.name, str(i), v) for i, v in enumerate(job.params)
                )
            )
        for name, value in job.wildcards.items():
            comps[f"wildcards:{name}"] = _sha(str(value))
        config = self._config_of(rule)
        if config_keys is None:
            whole = self._whole_config(config)
            if isinstance(whole, Uncacheable):
                raise whole
            comps[WHOLE_CONFIG] = whole
        else:
            for key in sorted(config_keys):
                found = _config_sha(config.get(key, "<absent>"), f"config:{key}")
                if isinstance(found, Uncacheable):
                    raise found
                comps[f"config:{key}"] = found
        written = [*map(str, job.output), *map(str, job.log)]
        if job.benchmark is not None:
            written.append(str(job.benchmark))
        for path in written:
            name = self.path(path)
            if name.startswith("<"):
                raise Uncacheable(
                    f"it writes {path}, outside the working directory (a restore writes only "
                    "inside it)"
                )
        # Named and ordered: swapping two inputs or outputs changes what the job does.
        for kind in ("input", "output", "log"):
            comps[f"io:{kind}"] = _sha(self._named_paths(getattr(job, kind, None) or []))
        if job.benchmark is not None:
            comps["io:benchmark"] = _sha(self.path(str(job.benchmark)))
        comps["threads"] = str(getattr(job, "threads", 1))
        resources = getattr(job, "resources", None)
        if resources is not None:
            for name, value in sorted(_resource_items(resources)):
                comps[f"resources:{name}"] = _sha(stable_repr(value))
        for f in sorted(map(str, job.input)):
            comps[f"input:{self.path(f)}"] = self.digests.digest(f)
        if template:
            comps.update(self.templates)
        if job.conda_env is not None and getattr(job.conda_env, "content", None):
            comps["software:conda"] = _sha(job.conda_env.content)
        if getattr(job, "container_img_url", None):
            comps["software:container"] = _sha(str(job.container_img_url))
        modules = getattr(job, "env_modules", None)
        if modules is not None:
            comps["software:envmodules"] = _sha(json.dumps(list(getattr(modules, "names", ()))))
        return comps

    def _param_digest(self, rule: str, name: str, value: Any) -> str:
        """A param by its value, and, for code it holds (a function, an object of a class
        the Snakefile defines), by that code (:class:`CodeFollower`)."""
        try:
            return self.follower.digest(value, f"params:{name}")
        except (Unfollowable, Unrepresentable) as e:
            raise Uncacheable(
                f"params:{name} of rule {rule} has no stable representation ({e}); give it a "
                "value pickle can describe (plain data, a dataclass), or pass the object "
                "some other way"
            ) from None

    def _environment(self) -> Optional[str]:
        if "environment" not in self._process_cache:
            self._process_cache["environment"] = self._read_environment()
        return self._process_cache["environment"]

    def _interpreter(self) -> Optional[str]:
        if "interpreter" not in self._process_cache:
            self._process_cache["interpreter"] = _read_interpreter(self._initial_env or {})
        return self._process_cache["interpreter"]

    def _umask(self) -> Optional[str]:
        if "umask" not in self._process_cache:
            self._process_cache["umask"] = _read_umask()
        return self._process_cache["umask"]

    def _read_environment(self) -> Optional[str]:
        """The environment variables the workflow set, changed or removed in this process
        (``os.environ[...] = ...`` in the Snakefile): every job inherits them. None when
        there are none, or the initial environment is unknown (no ``/proc``)."""
        if self._initial_env is None:
            return None
        changed = sorted((k, v) for k, v in os.environ.items() if self._initial_env.get(k) != v)
        removed = sorted(k for k in self._initial_env if k not in os.environ)
        if not changed and not removed:
            return None
        return _sha(self._site_neutral(json.dumps([changed, removed])))

    def process_may_have_changed(self) -> None:
        """A job ended: a ``run:`` block runs in this process and may have changed its
        environment or library state, so the next key reads them again (until then they are
        read once, not per job)."""
        self._process_cache.clear()
        self._state_cache = None

    def _process_state(self) -> dict[str, str]:
        if self._state_cache is None:
            self._state_cache = self._read_process_state()
        return self._state_cache

    def _read_process_state(self) -> dict[str, str]:
        """What a ``run:`` block inherits from Snakemake's process besides its globals, and
        not from the site: the process-global settings of the libraries loaded in it that
        changed since the plugin was imported, before the Snakefile was read
        (``pd.set_option(...)`` or ``np.set_printoptions(...)`` in the Snakefile; a library
        first imported since then with all its state), read as the sticky executor's direct
        mode reads them (:mod:`stickyinvoc.registries`); objects by type and name, not
        address. One component per setting (``process-state:numpy:printoptions``), so that a
        rerun names what changed. What the launch sets (resource limits, priority, signal
        dispositions, a profiler) is the site's, like the initial environment; the folders
        Snakemake put on ``sys.path`` for the Snakefile and its includes are the workflow's
        layout, whose modules count where code imports them (:meth:`CodeFollower.imported`)."""
        from ._snakemake_compat import snakefile_folders

        state = without_path_entries(changed_process_state(), snakefile_folders(self.workflow))
        return process_state_components(
            without_snakemakes_handlers(state),
            self._site_neutral,
            lambda obj: self.follower.digest(obj, "process-state"),
        )

    def _command_files(self, command: str, declared: set[str]) -> dict[str, str]:
        """Workflow files a shell command names without declaring them as inputs
        (``python scripts/helper.py``, ``bash tools/run.sh``, ``-m pkg.tool``), by content,
        and what Python files among them import from the workflow."""
        found: dict[str, str] = {}
        try:
            tokens = shlex.split(command, comments=False)
        except ValueError:
            tokens = command.split()
        folders = [Path(self.workdir), Path(self.workflow.basedir)]
        for i, token in enumerate(tokens):
            candidates = []
            if i > 0 and tokens[i - 1] == "-m":
                top = token.split(".")[0]
                candidates = [f / f"{top}.py" for f in folders] + [f / top for f in folders]
            elif "/" in token or token.endswith((".py", ".sh", ".R", ".pl", ".jl")):
                candidates = [Path(token)] if os.path.isabs(token) else [f / token for f in folders]
            for path in candidates:
                name = self.path(str(path))
                if name in declared or name.startswith("<outside>") or not path.exists():
                    continue
                if path.is_dir():
                    if _is_package(path):
                        found[f"command-file:{name}/"] = python_tree_digest(path)
                    break
                found[f"command-file:{name}"] = _sha(path.read_bytes())
                if path.suffix == ".py":
                    text = path.read_text(errors="replace")
                    for module, sha in local_imports(text, [path.parent, *folders]).items():
                        found[f"command-module:{module}"] = sha
                break
        return found

    def _named_paths(self, files: Any) -> str:
        """Ordered paths (as the key names them) with their flags (``protected()`` changes
        an output's mode, ``directory()`` its kind), and which names point at which
        positions."""
        order = [[self.path(str(f)), *_flags(f)] for f in files]
        names: dict[str, Any] = {}
        items = getattr(files, "_names", None)  # Snakemake's Namedlist: name -> (start, end)
        if isinstance(items, dict):
            names = {n: list(span) if span else None for n, span in items.items()}
        return json.dumps({"order": order, "names": names}, sort_keys=True)

    def _command(self, job: Any) -> Optional[str]:
        """The shell command exactly as ``shell()`` runs it, site paths replaced by names."""
        if getattr(job.rule, "shellcmd", None) is None:
            return None
        from ._snakemake_compat import shell_settings

        try:
            formatted = job.shellcmd
        except Exception as e:
            raise Uncacheable(f"its shell command cannot be formatted ({e})") from None
        address = _ADDRESS.search(formatted)
        if address is not None:
            raise Uncacheable(
                "its shell command shows a memory address (an object formatted into it, "
                f"{address.group(0)!r}), different in every run; format a value, not the object"
            )
        prefix, suffix, executable = shell_settings()
        text = json.dumps([prefix, formatted, suffix, executable])
        return self._site_neutral(text)

    def _site_neutral(self, text: str) -> str:
        """Absolute paths of this site (working directory, site roots, the temporary folder)
        replaced by their names, longest first, so the same command keys alike elsewhere."""
        for folder, name in self._site_names:
            text = re.sub(re.escape(folder) + r"(?![\w.-])", name, text)
        return text

    def _config_of(self, rule: Any) -> Any:
        from ._snakemake_compat import module_config

        return module_config(self.workflow, rule)

    def _whole_config(self, config: Any) -> "str | Uncacheable":
        if config is self.config:
            return self.whole_config
        return _config_sha(config, WHOLE_CONFIG)

    def _code_of(self, job: Any) -> tuple[dict[str, str], Optional[set[str]]]:
        rule = job.rule
        source_path = rule.script or getattr(rule, "notebook", None)
        shown = str(source_path) if source_path else ""
        if "{" in shown:
            shown = shown.format(wildcards=job.wildcards, params=job.params, **job.wildcards)
        cache_key = (rule.name, shown)
        if cache_key not in self._code:
            try:
                self._code[cache_key] = self._compute_code(job, source_path)
            except Uncacheable as e:
                self._code[cache_key] = e
        found = self._code[cache_key]
        if isinstance(found, Uncacheable):
            raise found
        return found

    def _compute_code(
        self, job: Any, source_path: Any
    ) -> tuple[dict[str, str], Optional[set[str]]]:
        from ._snakemake_compat import get_source, new_source_cache, shell_settings

        rule = job.rule
        comps: dict[str, str] = {}
        config_keys: Optional[set[str]] = None
        if rule.shellcmd is not None:
            comps["code:shell"] = _sha(rule.shellcmd)
            config_keys = shell_config_reads(rule.shellcmd)
        elif getattr(rule, "run_func_src", None):
            # run: code sees all of config, and runs everything it reaches: by its bytecode
            # (code:run-reach), so reformatting the block changes nothing; other rules'
            # generated run functions by their source.
            run_func = getattr(rule, "run_func", None)
            if run_func is None or not getattr(rule, "is_run", False):
                comps["code:run"] = _sha(rule.run_func_src)
            else:
                try:
                    comps["code:run-reach"] = self.follower.digest(run_func, f"rule {rule.name}")
                except Unfollowable as e:
                    raise Uncacheable(
                        f"its run: block reaches something the key cannot follow: {e}"
                    ) from None
                # shell("python scripts/x.py ...") inside the block: the files its strings name
                comps.update(self._command_files(" ".join(_strings(run_func.__code__)), set()))
        # Every job Snakemake starts through shell() (shell:, run: blocks calling shell(), and
        # the local executor's script and wrapper jobs) sees the shell prefix's exports.
        comps["shell-settings"] = _sha(self._site_neutral(json.dumps(shell_settings())))
        if source_path:
            cache = new_source_cache(self.workflow)
            path, source, language, is_local, _ = get_source(
                source_path, cache, rule.basedir, job.wildcards, job.params
            )
            shown = path.get_path_or_uri(secret_free=True)
            name = self.path(shown) if is_local else shown
            comps[f"script:{name}"] = _sha(source)
            if is_local and shown.endswith(".py"):
                folders = script_search_folders(
                    Path(shown).parent, [str(self.workdir), str(self.workflow.basedir)]
                )
                text = source.decode(errors="replace") if isinstance(source, bytes) else source
                for module, sha in local_imports(text, folders).items():
                    comps[f"module:{module}"] = sha
            elif is_local and language != "python":
                # A shell, R or Julia script may source any file beside it (source x.sh,
                # source("x.R")): every file of its folder counts.
                comps[f"script-folder:{self.path(str(Path(shown).parent))}"] = _tree_of_files(
                    Path(shown).parent
                )
            if language == "python" and not getattr(rule, "notebook", None):
                config_keys = script_config_reads(
                    source.decode() if isinstance(source, bytes) else source
                )
        if getattr(rule, "cwl", None):
            raise Uncacheable("it runs a CWL tool (cwl:), whose files the key does not follow")
        if getattr(rule, "template_engine", None):
            comps["code:template-engine"] = _sha(str(rule.template_engine))
        if getattr(rule, "wrapper", None):
            comps["code:wrapper"] = _sha(str(rule.wrapper))
            folder = self._local_wrapper(str(rule.wrapper))
            if folder is not None:
                comps["code:wrapper-files"] = _tree_of_files(folder)
            config_keys = None
        return comps, config_keys

    def _local_wrapper(self, wrapper: str) -> Optional[Path]:
        """The folder of a wrapper on this machine (``file:`` or a ``file:`` prefix), whose
        every file (wrapper.py, environment.yaml, ...) counts; None for a remote wrapper
        (named by its version tag: the string is its content)."""
        from ._snakemake_compat import wrapper_prefix

        text = wrapper
        if not text.startswith("file:"):
            prefix = wrapper_prefix(self.workflow) or ""
            if not prefix.startswith("file:"):
                return None
            text = prefix.rstrip("/") + "/" + wrapper
        local = text[len("file:") :]
        if local.startswith("//"):
            local = local[2:]
        folder = Path(local)
        if not folder.is_absolute():
            folder = Path(self.workflow.basedir) / folder
        if folder.is_file():
            folder = folder.parent
        return folder if folder.is_dir() else None


def _strings(code: Any) -> list[str]:
    """The string constants of a code object and the code nested in it."""
    found, pending = [], [code]
    while pending:
        co = pending.pop()
        for const in co.co_consts:
            if isinstance(const, str):
                found.append(const)
            elif hasattr(const, "co_consts"):
                pending.append(const)
    return found


_SITE_FLAGS = frozenset({"storage_object", "sourcecache_entry"})
"""Flags whose values are this site's objects (not what the job does)."""


def _flags(f: Any) -> list[str]:
    """The names of a file's Snakemake flags (``protected``, ``temp``, ``directory``...)."""
    flags = getattr(f, "flags", None)
    if not isinstance(flags, dict):
        return []
    return sorted(str(name) for name in flags if name not in _SITE_FLAGS)


def _registries_now() -> dict[tuple[str, str], Any]:
    from stickyinvoc.registries import read_registries

    try:
        return read_registries()
    except Exception:  # a reader failing must not stop every snakemake command
        return {}


def _state_at_import() -> Optional[dict[tuple[str, str], Any]]:
    from ._snakemake_compat import workflow_already_read

    return None if workflow_already_read() else _registries_now()


_STATE_AT_IMPORT = _state_at_import()
"""The process-global library state when the plugin was imported: Snakemake's command line
imports its executor plugins before it reads the Snakefile. None where a Snakefile was read
before (a Python session that used the API first): what it set cannot be told from what the
launch gave, and the key then holds the whole state (:func:`changed_process_state`)."""


_GONE = "<unloaded>"

_PROCESS_BOOKKEEPING = frozenset(
    {
        ("os", "environ"),  # the environment component: what the workflow set
        ("abc", "cache_token"),  # counts ABC registrations by any import
        ("atexit", "callbacks"),  # a count; a run: block does not run them
        ("threading", "threads"),  # the executor's own threads, there or not at the time
        ("ctypes", "errno"),  # the last foreign call's
    }
)
"""Registry entries that count or record what the process did rather than configure what a
``run:`` block does: not in keys."""


def process_state_measured() -> bool:
    """Whether the state at import is known (see :data:`_STATE_AT_IMPORT`)."""
    return _STATE_AT_IMPORT is not None


def changed_process_state() -> dict[tuple[str, str], Any]:
    """The process-global library state that differs from :data:`_STATE_AT_IMPORT` (what
    Snakemake and the workflow changed since), a library imported since then with all its
    state, a state that disappeared as unloaded; all of it where the state at import is
    unknown (sound, but a store from another launch may not restore ``run:`` blocks)."""
    now = _registries_now()
    if _STATE_AT_IMPORT is None:
        return now
    changed: dict[tuple[str, str], Any] = {
        k: _delta(_STATE_AT_IMPORT.get(k), v)
        for k, v in now.items()
        if k not in _STATE_AT_IMPORT or _STATE_AT_IMPORT[k] != v
    }
    changed.update({k: _GONE for k in _STATE_AT_IMPORT if k not in now})
    return changed


def without_path_entries(
    state: dict[tuple[str, str], Any], entries: set[str]
) -> dict[tuple[str, str], Any]:
    """``state`` (:func:`changed_process_state`) without ``entries`` in its ``sys.path``
    (added since the launch, or the whole path where the launch's is unknown); a path with
    nothing else changed is left out."""
    value = state.get(("sys", "path"))
    if not entries or not isinstance(value, tuple):
        return state
    kept = dict(state)
    if len(value) == 4 and value[0] == _ADDED and value[2] == _GONE_ITEMS:
        added = tuple(p for p in value[1] if p not in entries)
        if added or value[3]:
            kept[("sys", "path")] = (_ADDED, added, _GONE_ITEMS, value[3])
        else:
            del kept[("sys", "path")]
    else:
        kept[("sys", "path")] = tuple(p for p in value if p not in entries)
    return kept


_ADDED, _GONE_ITEMS = "<added since the launch>", "<gone>"


def without_snakemakes_handlers(
    state: dict[tuple[str, str], Any],
) -> dict[tuple[str, str], Any]:
    """``state`` with the signal handlers Snakemake itself installs (its scheduler's
    ``SIGTERM`` handler, set once jobs run) taken as the launch's: a job keyed while jobs run
    and the same job keyed before scheduling (all its upstream jobs restored) get one key."""
    value = state.get(("signal", "handlers"))
    if not isinstance(value, dict) or _STATE_AT_IMPORT is None:
        return state
    before = _STATE_AT_IMPORT.get(("signal", "handlers"))
    before = before if isinstance(before, dict) else {}
    merged = {
        signum: before.get(signum) if _snakemakes(handler) else handler
        for signum, handler in value.items()
    }
    kept = dict(state)
    if merged == before:
        del kept[("signal", "handlers")]
    else:
        kept[("signal", "handlers")] = merged
    return kept


def _snakemakes(handler: Any) -> bool:
    from stickyinvoc.registries import Same

    if not isinstance(handler, Same):
        return False
    module = getattr(handler.obj, "__module__", None) or ""
    return isinstance(module, str) and module.split(".")[0] == "snakemake"


def _delta(before: Any, now: Any) -> Any:
    """A sequence setting that held items at import (warnings filters of ``python -W``,
    ``PYTHONWARNINGS`` or ``-X dev``: the launch's) by the items added since, in their order,
    and those gone; any other change by the whole value. Where an item the launch put there
    now stands does not count (a library re-adding a filter moves it to the front)."""
    if isinstance(before, tuple) and isinstance(now, tuple):
        added = tuple(item for item in now if item not in before)
        gone = tuple(item for item in before if item not in now)
        return (_ADDED, added, _GONE_ITEMS, gone)
    return now


def process_state_components(
    state: dict[tuple[str, str], Any],
    neutral: Callable[[str], str],
    code: Optional[Callable[[Any], str]] = None,
) -> dict[str, str]:
    """Key components of changed process state (:func:`changed_process_state`): one per
    setting, by its repr with addresses removed and site paths named by ``neutral``, a
    function in it by ``code`` (what it does: pandas' ``display.float_format`` set to a
    Snakefile function or ``"{:.2f}".format``), less what counts or records rather than
    configures (:data:`_PROCESS_BOOKKEEPING`) and Snakemake's own loggers (its command line
    sets them)."""
    found = {}
    for (module, label), value in state.items():
        if (module, label) in _PROCESS_BOOKKEEPING or module == "linecache":
            continue
        if (module, label) == ("logging", "loggers") and isinstance(value, dict):
            value = {n: v for n, v in value.items() if str(n).split(".")[0] != "snakemake"}
        if code is not None:
            value = _code_of_callables(value, code)
        text = neutral(_ADDRESS_ONLY.sub("", repr(value)))
        found[f"process-state:{module}:{label}"] = _sha(text)
    return found


def _code_of_callables(value: Any, code: Callable[[Any], str]) -> Any:
    """``value`` with each function it holds (as :class:`stickyinvoc.registries.Same`)
    replaced by its code's digest; one that cannot be followed stays by name."""
    from stickyinvoc.registries import Same

    if isinstance(value, Same):
        if callable(value.obj):
            try:
                return f"<code {code(value.obj)}>"
            except Exception:
                return value
        return value
    if isinstance(value, dict):
        return {k: _code_of_callables(v, code) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_code_of_callables(v, code) for v in value)
    return value


_INTERPRETER_ENV = ("PYTHONHASHSEED", "PYTHONINTMAXSTRDIGITS")
"""Launch settings of Python that change what the same code writes (the order of a set of
strings, whether a long int prints), in Snakemake's process and every Python a job starts."""


def _read_interpreter(initial_env: dict[str, str]) -> Optional[str]:
    """Python's launch settings that change what the same code writes, where not the usual
    ones (None then, so that keys made before they were keyed stay valid): a fixed
    ``PYTHONHASHSEED`` (random, the default, makes two fresh runs differ anyway),
    ``PYTHONINTMAXSTRDIGITS``, and this process's int digit limit (``-X
    int_max_str_digits``)."""
    found = {k: v for k in _INTERPRETER_ENV if (v := initial_env.get(k)) not in (None, "random")}
    limit = sys.get_int_max_str_digits()
    if limit != _USUAL_INT_DIGITS:
        found["int_max_str_digits"] = str(limit)
    return _sha(json.dumps(sorted(found.items()))) if found else None


_USUAL_INT_DIGITS = 4300
_USUAL_UMASK = "0022"


def _read_umask() -> Optional[str]:
    """The process's umask where it is not the usual 022, else None: every job inherits it,
    and it sets the modes of the files a job creates (a fresh run at a site with umask 077
    makes 0600 files; a restore puts back the modes stored). Keyed only where unusual, so
    that keys made before it was keyed stay valid at the usual sites. Read from
    ``/proc/self/status`` (``os.umask`` reads it only by setting it, racing other threads);
    None where that cannot be read."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("Umask:"):
                    value = line.split()[1]
                    return None if value == _USUAL_UMASK else value
    except OSError:
        pass
    return None


def initial_environment() -> Optional[dict[str, str]]:
    """The environment this process started with (``/proc/self/environ``), to tell what the
    workflow set since; None where that cannot be read."""
    try:
        raw = Path("/proc/self/environ").read_bytes()
    except OSError:
        return None
    found = {}
    for item in raw.split(b"\0"):
        name, sep, value = item.partition(b"=")
        if sep:
            found[os.fsdecode(name)] = os.fsdecode(value)
    return found


def _rule_configs(workflow: Any) -> list[Any]:
    from ._snakemake_compat import module_config

    return [module_config(workflow, rule) for rule in getattr(workflow, "rules", ())]


_SITE_RESOURCES = frozenset({"_cores", "_nodes", "tmpdir"})
"""Resources that are not the job's: the run's totals, and the temporary folder (a site path:
the command names it ``<tmp>``)."""


def _resource_items(resources: Any) -> list[tuple[str, Any]]:
    items = resources.items() if hasattr(resources, "items") else []
    return [(n, v) for n, v in items if n not in _SITE_RESOURCES]


def _tree_of_files(folder: Path) -> str:
    """Every file under ``folder`` by relative path and content."""
    return tree_digest(
        {str(full.relative_to(folder)): _sha(full.read_bytes()) for full in files_under(folder)}
    )


def _config_sha(value: Any, what: str) -> "str | Uncacheable":
    try:
        return _value_sha(value)
    except Unrepresentable as e:
        return Uncacheable(f"{what} has no stable representation ({e})")


def provenance_key(components: dict[str, str]) -> str:
    return _sha(json.dumps(sorted(components.items())))
