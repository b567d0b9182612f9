"""Provenance keys of Snakemake jobs, for checkpoint-aware rule skipping.

A job's key is a hash over named *components*: its rule's code (shell text, ``run:`` source,
or the script's content plus the workflow-local Python modules it imports), params,
wildcards, the workflow config, the content of every input, the sticky template's code and the
software environment (conda env file, container URL). Absolute paths, mtimes and host names
are not part of it, so the same job has the same key at another site.

Inputs count by content: a job whose upstream reran but produced byte-identical files keeps
its key, and is restored (an "early cutoff"). The components are kept with each checkpoint,
so a rerun can be explained by the components that changed.
"""

import ast
import hashlib
import json
import os
from pathlib import Path
from typing import Any, Optional

from ckptstore import file_digest


def _sha(text: "str | bytes") -> str:
    data = text.encode() if isinstance(text, str) else text
    return hashlib.sha256(data).hexdigest()


def _stable_repr(value: Any) -> str:
    text = repr(value)
    return "<unrepresentable>" if " at 0x" in text else text


class InputDigests:
    """Content digests of input files, cached by (path, size, mtime) for the whole run, and of
    what every job of the run shares (computed once, not per job)."""

    def __init__(self, config: Any, templates_file: Optional[Path]) -> None:
        self._cache: dict[tuple[str, int, int], str] = {}
        self.config = _sha(json.dumps(config, sort_keys=True, default=_stable_repr))
        self.templates = (
            _sha(templates_file.read_bytes())
            if templates_file is not None and templates_file.is_file()
            else None
        )

    def digest(self, path: str) -> str:
        if os.path.isdir(path):
            parts = []
            for root, _, files in sorted(os.walk(path)):
                for name in sorted(files):
                    full = os.path.join(root, name)
                    parts.append(f"{os.path.relpath(full, path)}={self.digest(full)}")
            return "tree:" + _sha("\n".join(parts))
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


def relative_path(path: str, workdir: Path) -> str:
    """A path as the key sees it: relative to the working directory, never absolute."""
    absolute = Path(os.path.abspath(path))
    try:
        return str(absolute.relative_to(workdir))
    except ValueError:
        return f"<outside>/{absolute.name}"


def job_components(
    job: Any, workflow: Any, *, workdir: Path, digests: InputDigests, template: Optional[str]
) -> dict[str, str]:
    """The named parts of a job's provenance, each a short, comparable value."""
    from snakemake.script import get_source
    from snakemake.sourcecache import SourceCache

    rule = job.rule
    comps: dict[str, str] = {"rule": rule.name}
    if rule.shellcmd is not None:
        comps["code:shell"] = _sha(rule.shellcmd)
    elif getattr(rule, "run_func_src", None):
        comps["code:run"] = _sha(rule.run_func_src)
    source_path = rule.script or getattr(rule, "notebook", None)
    if source_path:
        cache = SourceCache(
            workflow.sourcecache.cache_path, workflow.sourcecache.runtime_cache_path
        )
        path, source, _, is_local, _ = get_source(
            source_path, cache, rule.basedir, job.wildcards, job.params
        )
        shown = path.get_path_or_uri(secret_free=True)
        comps[f"script:{relative_path(shown, workdir) if is_local else shown}"] = _sha(source)
        if is_local and shown.endswith(".py"):
            folders = [Path(shown).parent, Path(workflow.basedir)]
            for name, sha in local_imports(source, folders).items():
                comps[f"module:{name}.py"] = sha
    if getattr(rule, "wrapper", None):
        comps["code:wrapper"] = _sha(str(rule.wrapper))
    comps["params"] = _sha(
        json.dumps(sorted(f"{k}={_stable_repr(v)}" for k, v in job.params.items()))
    )
    comps["wildcards"] = _sha(json.dumps(dict(job.wildcards), sort_keys=True))
    comps["config"] = digests.config
    comps["outputs"] = _sha(json.dumps(sorted(relative_path(str(o), workdir) for o in job.output)))
    for f in sorted(map(str, job.input)):
        comps[f"input:{relative_path(f, workdir)}"] = digests.digest(f)
    if template and digests.templates is not None:
        comps["template"] = digests.templates
    if job.conda_env is not None and getattr(job.conda_env, "content", None):
        comps["software:conda"] = _sha(job.conda_env.content)
    if getattr(job, "container_img_url", None):
        comps["software:container"] = _sha(str(job.container_img_url))
    return comps


def provenance_key(components: dict[str, str]) -> str:
    return _sha(json.dumps(sorted(components.items())))


def explain(old: dict[str, str], new: dict[str, str]) -> list[str]:
    """Human-readable reasons why two sets of components give different keys."""
    reasons = []
    for name in sorted(set(old) | set(new)):
        if name not in old:
            reasons.append(f"{name} is new")
        elif name not in new:
            reasons.append(f"{name} is gone")
        elif old[name] != new[name]:
            reasons.append(f"{name} changed")
    return reasons
