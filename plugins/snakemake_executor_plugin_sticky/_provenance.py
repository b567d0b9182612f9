"""Provenance keys of Snakemake jobs, for checkpoint-aware rule skipping.

A job's key is a hash over named *components*: its rule's code (shell text, ``run:`` source,
or the script's content plus the workflow-local Python modules it imports), each param, each
wildcard, the config values the job reads (or the whole config when that cannot be known),
the content of every input, the sticky template's code and the software environment (conda
env file, container URL). Absolute paths, mtimes and host names are not part of it, so the
same job has the same key at another site.

Inputs count by content: a job whose upstream reran but produced byte-identical files keeps
its key, and is restored (an "early cutoff"). The components are kept with each checkpoint,
so a rerun can be explained by the components that changed ("params:alpha changed").
"""

import ast
import hashlib
import json
import os
import string
from pathlib import Path
from typing import Any, Optional

from ckptstore import file_digest

WHOLE_CONFIG = "config"
"""The component name used when a job's config reads cannot be known."""


def _sha(text: "str | bytes") -> str:
    data = text.encode() if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


def _stable_repr(value: Any) -> str:
    text = repr(value)
    return "<unrepresentable>" if " at 0x" in text else text


def _value_sha(value: Any) -> str:
    return _sha(json.dumps(value, sort_keys=True, default=_stable_repr))


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


def local_imports(source: str, search: list[Path], depth: int = 3) -> dict[str, str]:
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
        names = set()
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
    counts then."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    parent: dict[ast.AST, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parent[child] = node
    keys: set[str] = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and node.id == "snakemake"):
            continue
        attr = parent.get(node)
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


def relative_path(path: str, workdir: Path) -> str:
    """A path as the key sees it: relative to the working directory, never absolute."""
    absolute = os.path.abspath(path)
    root = str(workdir).rstrip(os.sep) + os.sep
    if absolute.startswith(root):  # string operations: this runs for every file of every job
        return absolute[len(root) :]
    return f"<outside>/{os.path.basename(absolute)}"


class KeyComputer:
    """Computes the provenance components of a run's jobs.

    What all jobs of a rule share (its code, the modules its script imports, which config keys
    it reads) is computed once per rule and script, not per job: keys must stay cheap next to
    the jobs themselves."""

    def __init__(self, workflow: Any, workdir: Path, templates_file: Optional[Path]) -> None:
        self.workflow = workflow
        self.workdir = workdir
        self.digests = InputDigests()
        self.config = workflow.config
        self.whole_config = _value_sha(workflow.config)
        self.templates = (
            _sha(templates_file.read_bytes())
            if templates_file is not None and templates_file.is_file()
            else None
        )
        self._code: dict[tuple[str, str], tuple[dict[str, str], Optional[set[str]]]] = {}

    def components(self, job: Any, template: Optional[str]) -> dict[str, str]:
        """The named parts of a job's provenance, each a short, comparable value."""
        rule = job.rule
        code, config_keys = self._code_of(job)
        comps: dict[str, str] = {"rule": rule.name, **code}
        for name, value in job.params.items():
            comps[f"params:{name}"] = _sha(_stable_repr(value))
        if len(job.params) > len(job.params.keys()):  # positional params have no names
            comps["params"] = _sha(json.dumps([_stable_repr(v) for v in job.params]))
        for name, value in job.wildcards.items():
            comps[f"wildcards:{name}"] = _sha(str(value))
        if config_keys is None:
            comps[WHOLE_CONFIG] = self.whole_config
        else:
            for key in sorted(config_keys):
                comps[f"config:{key}"] = _value_sha(self.config.get(key, "<absent>"))
        comps["outputs"] = _sha(
            json.dumps(sorted(relative_path(str(o), self.workdir) for o in job.output))
        )
        for f in sorted(map(str, job.input)):
            comps[f"input:{relative_path(f, self.workdir)}"] = self.digests.digest(f)
        if template and self.templates is not None:
            comps["template"] = self.templates
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
        from snakemake.script import get_source
        from snakemake.sourcecache import SourceCache

        rule = job.rule
        comps: dict[str, str] = {}
        config_keys: Optional[set[str]] = None
        if rule.shellcmd is not None:
            comps["code:shell"] = _sha(rule.shellcmd)
            config_keys = shell_config_reads(rule.shellcmd)
        elif getattr(rule, "run_func_src", None):
            comps["code:run"] = _sha(rule.run_func_src)  # run: code sees all of config
        if source_path:
            cache = SourceCache(
                self.workflow.sourcecache.cache_path, self.workflow.sourcecache.runtime_cache_path
            )
            path, source, language, is_local, _ = get_source(
                source_path, cache, rule.basedir, job.wildcards, job.params
            )
            shown = path.get_path_or_uri(secret_free=True)
            name = relative_path(shown, self.workdir) if is_local else shown
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


def provenance_key(components: dict[str, str]) -> str:
    return _sha(json.dumps(sorted(components.items())))
