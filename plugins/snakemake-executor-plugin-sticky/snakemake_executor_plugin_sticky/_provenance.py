"""Provenance keys of Snakemake jobs, for checkpoint-aware rule skipping.

A job's key is a hash over named *components*: its rule's code (shell text, ``run:`` source,
or the script's content plus the workflow-local Python modules it imports), each param, each
wildcard, the config values the job reads (or the whole config when that cannot be known),
the content of every input, the sticky template's code plus the workflow-local modules it
imports, the software environment (conda env file, container URL) and the key schema version
(:data:`KEY_SCHEMA`: a change of this algorithm never reuses old keys). Paths inside the
working directory count relative to it, and mtimes and host names are not part of the key,
so the same job has the same key at another site. A path outside the working directory
counts by its absolute path (two different files never share a name), or relative to a
declared site root (``data=/data`` at site A, ``data=/scratch/data`` at site B).

A job whose key would miss something it depends on gets no key at all
(:class:`Uncacheable`): a param without a stable representation (an object whose ``repr``
shows its address, or is truncated), or an output outside the working directory (a restore
writes only inside it). It runs, and the caller says why in one line.

Inputs count by content: a job whose upstream reran but produced byte-identical files keeps
its key, and is restored (an "early cutoff"). The components are kept with each checkpoint,
so a rerun can be explained by the components that changed ("params:alpha changed").
"""

import ast
import hashlib
import json
import os
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional

from ckptstore import file_digest

WHOLE_CONFIG = "config"
"""The component name used when a job's config reads cannot be known."""

KEY_SCHEMA = "2"
"""The version of the key algorithm, a component of every key: bump it whenever what a
component means changes, so no key computed the old way is ever reused."""

OUTSIDE = "<outside>"


class Uncacheable(Exception):
    """The job cannot get a key that covers what it depends on (the message says why)."""


def _sha(text: "str | bytes") -> str:
    data = text.encode() if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


class Unrepresentable(ValueError):
    """A value has no stable text form (its repr shows an address or is truncated)."""


def stable_repr(value: Any) -> str:
    """A text form of a param or config value that is the same in every process and changes
    whenever the value does; :class:`Unrepresentable` if there is none.

    Containers are walked (sets and dict keys in sorted order, so hash randomisation does
    not matter); numpy-like arrays count by dtype, shape and bytes; anything else by its
    ``repr``, unless that shows a memory address (``<object at 0x...>``) or is abridged
    (``...``), which would make different values look the same."""
    if value is None or isinstance(value, (bool, int, float, complex, str, bytes)):
        return repr(value)
    if isinstance(value, (list, tuple)):
        inner = ", ".join(stable_repr(v) for v in value)
        return f"{type(value).__name__}[{inner}]"
    if isinstance(value, (set, frozenset)):
        return f"{type(value).__name__}{{{', '.join(sorted(stable_repr(v) for v in value))}}}"
    if isinstance(value, dict):
        items = sorted((stable_repr(k), stable_repr(v)) for k, v in value.items())
        return "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
    if isinstance(value, os.PathLike):
        return f"path:{os.fspath(value)!r}"
    tobytes = getattr(value, "tobytes", None)
    if callable(tobytes) and hasattr(value, "dtype") and hasattr(value, "shape"):
        return f"array:{value.dtype}:{tuple(value.shape)}:{_sha(tobytes())}"
    text = repr(value)
    if " at 0x" in text or "..." in text:
        raise Unrepresentable(f"{type(value).__name__} value {text[:60]!r}")
    return f"{type(value).__module__}.{type(value).__qualname__}:{text}"


def _value_sha(value: Any) -> str:
    return _sha(stable_repr(value))


def tree_digest(entries: dict[str, str]) -> str:
    """The digest of a directory from its files' digests (relative path -> digest)."""
    return "tree:" + _sha("\n".join(f"{rel}={d}" for rel, d in sorted(entries.items())))


def entry_digest(entry: dict[str, Any]) -> Optional[str]:
    """The digest :meth:`InputDigests.digest` will give an output once a manifest entry is
    restored; None where only the disk can say (a link: its target's content)."""
    if "file" in entry:
        return str(entry["file"])
    if "tree" not in entry or entry.get("links"):
        return None
    return tree_digest({**entry["tree"], **{f"{d}/": "dir" for d in entry.get("dirs", ())}})


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
            return digests.digest(_link_target(full, entry["link"]))
        except OSError:
            return None
    tree, links = entry.get("tree", {}), entry.get("links", {})
    entries = {**tree, **{f"{d}/": "dir" for d in entry.get("dirs", ())}}
    root = os.path.abspath(full)
    for rel, target in links.items():
        where = _link_target(os.path.join(root, rel), target)
        if where.startswith(root + os.sep):
            inner = os.path.relpath(where, root)
            if inner in links or inner in entry.get("dirs", ()):
                return None
            content = tree.get(inner, "dangling")
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
        assumed = self._assumed.get(os.path.abspath(path))
        if assumed is not None:
            return assumed
        if os.path.isdir(path):
            # Everything a restore puts back counts: files by content, every subdirectory
            # (empty ones too), links by target (and the content they lead to).
            entries = {}
            for root, dirs, files in os.walk(path):
                for name in dirs + files:
                    full = os.path.join(root, name)
                    rel = os.path.relpath(full, path)
                    if os.path.islink(full):
                        content = self.digest(full) if os.path.exists(full) else "dangling"
                        entries[rel] = f"link:{os.readlink(full)}:{content}"
                    elif os.path.isdir(full):
                        entries[rel + "/"] = "dir"
                    else:
                        entries[rel] = self.digest(full)
            return tree_digest(entries)
        st = os.stat(path)
        key = (os.path.abspath(path), st.st_size, st.st_mtime_ns)
        if key not in self._cache:
            self._cache[key] = file_digest(Path(path))
        return self._cache[key]


def local_imports(source: str, search: list[Path], depth: int = 1000) -> dict[str, str]:
    """Workflow-local modules a Python source imports (transitively): name -> content sha.

    Only modules found as ``NAME.py`` in ``search`` folders count; installed packages are the
    software environment's business."""
    found: dict[str, str] = {}
    pending = [(source, depth)]
    while pending:
        text, level = pending.pop()
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        names: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
        for name in sorted(names - set(found)):
            for folder in search:
                candidate = folder / f"{name}.py"
                if candidate.is_file():
                    content = candidate.read_text()
                    found[name] = _sha(content)
                    if level > 1:
                        pending.append((content, level - 1))
                    break
    return found


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
                self.templates[f"template-module:{module}.py"] = sha
        self._code: dict[tuple[str, str], tuple[dict[str, str], Optional[set[str]]]] = {}

    def path(self, path: str) -> str:
        """A path's name in keys and manifests (see :func:`relative_path`)."""
        return relative_path(path, self.workdir, self.roots)

    def components(self, job: Any, template: Optional[str]) -> dict[str, str]:
        """The named parts of a job's provenance, each a short, comparable value.

        Raises :class:`Uncacheable` if the job cannot have a key that covers it."""
        rule = job.rule
        code, config_keys = self._code_of(job)
        comps: dict[str, str] = {"schema": KEY_SCHEMA, "rule": rule.name, **code}
        for name, value in job.params.items():
            comps[f"params:{name}"] = _param_sha(rule.name, name, value)
        if len(job.params) > len(job.params.keys()):  # positional params have no names
            comps["params"] = _sha(
                "\n".join(_param_sha(rule.name, str(i), v) for i, v in enumerate(job.params))
            )
        for name, value in job.wildcards.items():
            comps[f"wildcards:{name}"] = _sha(str(value))
        if config_keys is None:
            if isinstance(self.whole_config, Uncacheable):
                raise self.whole_config
            comps[WHOLE_CONFIG] = self.whole_config
        else:
            for key in sorted(config_keys):
                found = _config_sha(self.config.get(key, "<absent>"), f"config:{key}")
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
        comps["outputs"] = _sha(json.dumps(sorted(self.path(str(o)) for o in job.output)))
        for f in sorted(map(str, job.input)):
            comps[f"input:{self.path(f)}"] = self.digests.digest(f)
        if template:
            comps.update(self.templates)
        if job.conda_env is not None and getattr(job.conda_env, "content", None):
            comps["software:conda"] = _sha(job.conda_env.content)
        if getattr(job, "container_img_url", None):
            comps["software:container"] = _sha(str(job.container_img_url))
        return comps

    def _code_of(self, job: Any) -> tuple[dict[str, str], Optional[set[str]]]:
        rule = job.rule
        source_path = rule.script or getattr(rule, "notebook", None)
        shown = str(source_path) if source_path else ""
        if "{" in shown:
            shown = shown.format(wildcards=job.wildcards, params=job.params, **job.wildcards)
        cache_key = (rule.name, shown)
        if cache_key not in self._code:
            self._code[cache_key] = self._compute_code(job, source_path)
        return self._code[cache_key]

    def _compute_code(
        self, job: Any, source_path: Any
    ) -> tuple[dict[str, str], Optional[set[str]]]:
        from ._snakemake_compat import get_source, new_source_cache

        rule = job.rule
        comps: dict[str, str] = {}
        config_keys: Optional[set[str]] = None
        if rule.shellcmd is not None:
            comps["code:shell"] = _sha(rule.shellcmd)
            config_keys = shell_config_reads(rule.shellcmd)
        elif getattr(rule, "run_func_src", None):
            comps["code:run"] = _sha(rule.run_func_src)  # run: code sees all of config
        if source_path:
            cache = new_source_cache(self.workflow)
            path, source, language, is_local, _ = get_source(
                source_path, cache, rule.basedir, job.wildcards, job.params
            )
            shown = path.get_path_or_uri(secret_free=True)
            name = self.path(shown) if is_local else shown
            comps[f"script:{name}"] = _sha(source)
            if is_local and shown.endswith(".py"):
                folders = [Path(shown).parent, Path(self.workflow.basedir)]
                for module, sha in local_imports(source, folders).items():
                    comps[f"module:{module}.py"] = sha
            if language == "python" and not getattr(rule, "notebook", None):
                config_keys = script_config_reads(
                    source.decode() if isinstance(source, bytes) else source
                )
        if getattr(rule, "wrapper", None):
            comps["code:wrapper"] = _sha(str(rule.wrapper))
            config_keys = None
        return comps, config_keys


def _param_sha(rule: str, name: str, value: Any) -> str:
    try:
        return _sha(stable_repr(value))
    except Unrepresentable as e:
        raise Uncacheable(
            f"params:{name} of rule {rule} has no stable representation ({e}); give it a "
            "value whose repr shows its content, or pass the object some other way"
        ) from None


def _config_sha(value: Any, what: str) -> "str | Uncacheable":
    try:
        return _value_sha(value)
    except Unrepresentable as e:
        return Uncacheable(f"{what} has no stable representation ({e})")


def provenance_key(components: dict[str, str]) -> str:
    return _sha(json.dumps(sorted(components.items())))
