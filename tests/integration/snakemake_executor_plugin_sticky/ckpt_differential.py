"""The differential harness of checkpoint-aware rule skipping: a run with the store must leave
exactly what a fresh run without it leaves, and rerun no job whose dependencies did not change.

A generated workflow holds many independent *sub-workflows* (``w0``, ``w1``, ...), each a small
random DAG of rules of every kind the store must handle:

* ``shell`` (some with ``shadow: "minimal"``), ``script`` (importing a workflow-local helper
  module, reading config), ``sticky`` (a script on a sticky template whose state comes from a
  helper module beside the templates file), ``run:`` blocks (they see the whole config);
* ``directory()`` outputs holding files, an empty subdirectory, a symbolic link and a mode,
  and outputs that are symbolic links to another output;
* ``temp()`` intermediates; params, config keys; an input file in the tree and inputs outside
  it.

Each *round* applies one random edit to every sub-workflow at once (a param, a param the output
ignores, the code, a comment, the helper module, config read or unread, an input's content or
only its time, an outside input, the shape of a directory output, a link's target; sometimes
the templates for all). Then, from clones of the workflow (new path, no outputs, no
``.snakemake/``: a second site):

1. **store site**: ``--executor sticky --sticky-checkpoints STORE`` (the store of all rounds);
2. **fresh site**: ``--executor sticky`` without a store, ``--notemp`` (so that the model below
   can read intermediates; the store site keeps Snakemake's temp handling).

One edit of one sub-workflow in one round is a *case*. A case **diverges** if any output of its
sub-workflow differs between the sites (kind, bytes, mode, link target), or a temp() output is
left at the store site. A job reran **unnecessarily** if it ran at the store site although its
dependencies are the same as in the previous round. Its dependencies are modelled from what the
README documents as the key: the rule's text (code, params), its script and the workflow-local
modules it imports, the templates and their helper module for a sticky job, the config values
it reads (the whole config where the key cannot know which), and its inputs' contents (as the
fresh sites hold them: a directory by its whole listing).

Used by ``test_checkpoint_differential.py`` (sized for CI) and ``bench/checkpoint_differential.py``.
"""

import hashlib
import json
import os
import random
import re
import shutil
import stat
import subprocess
import sys
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from snakemake_executor_plugin_sticky._provenance import script_config_reads, shell_config_reads

EDITS = (
    "param",
    "unused-param",
    "code",
    "comment",
    "helper",
    "config",
    "config-unread",
    "input",
    "input-same",
    "outside",
    "dir-shape",
    "link-target",
    "none",
)
"""Edits of one sub-workflow (each applied where it applies; else ``none``)."""

GLOBAL_EDITS = ("template", "template-helper")
"""Edits that touch every sticky job of every sub-workflow (one round in a few)."""

PENDING: dict[str, str] = {}
"""Edit kinds known to diverge until another part lands (kind -> why); the CI test leaves them
out. Empty since issue 13's key work (template helper modules, whole outside paths) merged:
``template-helper`` and ``outside-twins`` (the ``outside`` edit with two outside inputs of
one base name read by one job) run in the CI test."""


@dataclass
class Node:
    """One rule of a sub-workflow; its output path is ``res/w{i}/{name}``."""

    name: str
    kind: str  # shell | script | sticky | run | dir | link
    inputs: list[str]  # paths: "data/..." (source), absolute (outside), or res/... (a node's)
    temp: bool = False
    shadow: bool = False
    param: int = 0
    unused: int = 0
    variant: int = 0
    comment: int = 0
    config_key: Optional[str] = None
    empty: int = 0  # dir: the name of its empty subdirectory
    link_to: Optional[str] = None  # link: the node output it points to (same folder)


@dataclass
class Sub:
    index: int
    nodes: list[Node]
    helper: int = 0
    data: int = 0
    outside: dict[str, int] = field(default_factory=dict)  # outside input -> its version

    @property
    def outside_paths(self) -> list[str]:
        return list(self.outside)

    @property
    def prefix(self) -> str:
        return f"w{self.index}"

    def out(self, node: Node) -> str:
        return f"res/{self.prefix}/{node.name}"


@dataclass
class Spec:
    subs: list[Sub]
    outside: Path
    config: dict[str, Any] = field(default_factory=dict)
    template: int = 0
    template_helper: int = 0


# ---- generation ----------------------------------------------------------------------------


def generate(rng: random.Random, n_subs: int, outside: Path, twins: bool = False) -> Spec:
    """A random workflow of ``n_subs`` sub-workflows. With ``twins``, a sub-workflow that reads
    outside the tree reads two files of one name in different folders."""
    spec = Spec([], outside)
    for i in range(n_subs):
        sub = Sub(i, [])
        spec.config[f"w{i}_k"] = rng.randrange(5)
        spec.config[f"w{i}_unread"] = 0
        if rng.random() < 0.5:
            for folder in ["a", "b"] if twins else ["a"]:
                sub.outside[str(outside / f"w{i}" / folder / "sample.csv")] = 0
        produced: list[tuple[str, str]] = []  # (path, kind of its node)
        for j in range(rng.randint(2, 4)):
            # Weights by cost: run: and shadow jobs each start a Snakemake process (about
            # a second or more), script: jobs a Python process; shell and sticky jobs are cheap.
            weights = {"shell": 6, "sticky": 4, "script": 2, "dir": 2, "link": 3, "run": 0.6}
            # A link points to an earlier file output, or to the input file in the tree.
            files = [p for p, k in produced if k not in ("dir",)] + [f"data/w{i}/in.txt"]
            kind = rng.choices(list(weights), weights=list(weights.values()))[0]
            node = Node(f"n{j}", kind, [], param=rng.randrange(3))
            if kind == "link":
                node.link_to = rng.choice(files)
                node.inputs = [node.link_to]
            else:
                pool = [f"data/w{i}/in.txt", *sub.outside_paths, *(p for p, _ in produced)]
                if kind in ("shell", "dir"):  # shell commands read files only
                    pool = [p for p in pool if dict(produced).get(p) != "dir"]
                node.inputs = rng.sample(pool, k=min(len(pool), rng.randint(1, 2)))
                if twins and sub.outside and j == 0:  # both twins, read by one job
                    node.inputs = [*sub.outside_paths, *node.inputs[:1]]
                    node.inputs = list(dict.fromkeys(node.inputs))
            if kind in ("shell", "script", "sticky") and rng.random() < 0.6:
                node.config_key = f"w{i}_k"
            node.shadow = kind == "shell" and rng.random() < 0.1
            sub.nodes.append(node)
            produced.append((sub.out(node), kind))
        # temp(): an intermediate consumed later, not a link's target, not itself a link
        consumed = {p for n in sub.nodes for p in n.inputs}
        targets = {n.link_to for n in sub.nodes if n.link_to}
        for node in sub.nodes:
            out = sub.out(node)
            if out in consumed and out not in targets and node.kind != "link":
                node.temp = rng.random() < 0.4
        spec.subs.append(sub)
    return spec


def edit_one(rng: random.Random, spec: Spec, sub: Sub, allowed: tuple[str, ...]) -> str:
    """Apply one random applicable edit to ``sub``; return its kind."""
    candidates = list(allowed)
    rng.shuffle(candidates)
    for kind in candidates:
        node = rng.choice(sub.nodes)
        if kind == "param":
            node.param += 1
        elif kind == "unused-param":
            node.unused += 1
        elif kind == "code":
            node.variant += 1
        elif kind == "comment":
            node.comment += 1
        elif kind == "helper":
            if not any(n.kind in ("script", "sticky") for n in sub.nodes):
                continue
            sub.helper += 1
        elif kind == "config":
            spec.config[f"{sub.prefix}_k"] += 1
        elif kind == "config-unread":
            spec.config[f"{sub.prefix}_unread"] += 1
        elif kind == "input":
            sub.data += 1
        elif kind == "input-same":
            pass  # rewritten with the same content (a new time) by render
        elif kind == "outside":
            if not sub.outside:
                continue
            sub.outside[rng.choice(sub.outside_paths)] += 1
        elif kind == "dir-shape":
            dirs = [n for n in sub.nodes if n.kind == "dir"]
            if not dirs:
                continue
            rng.choice(dirs).empty += 1
        elif kind == "link-target":
            links = [n for n in sub.nodes if n.kind == "link"]
            if not links:
                continue
            link = rng.choice(links)
            position = [sub.out(n) for n in sub.nodes].index(sub.out(link))
            files = [
                sub.out(n)
                for n in sub.nodes[:position]
                if n.kind != "dir" and not n.temp and sub.out(n) != link.link_to
            ] + [f"data/{sub.prefix}/in.txt"]
            files = [f for f in files if f != link.link_to]
            if not files:
                continue
            link.link_to = rng.choice(files)
            link.inputs = [link.link_to]
        return kind
    return "none"


# ---- rendering --------------------------------------------------------------------------------

SNAKEFILE_HEAD = '''\
import os


def _read_any(path):
    """A file's text, or a directory's whole listing (names, kinds, links, modes, bytes)."""
    if not os.path.isdir(path) or os.path.islink(path):
        with open(path) as f:
            return f.read()
    lines = []
    for root, dirs, files in os.walk(path):
        for name in sorted(dirs + files):
            full = os.path.join(root, name)
            rel = os.path.relpath(full, path)
            if os.path.islink(full):
                lines.append(f"L {{rel}} -> {{os.readlink(full)}}")
            elif os.path.isdir(full):
                lines.append(f"D {{rel}} {{oct(os.stat(full).st_mode & 0o777)}}")
            else:
                with open(full) as f:
                    lines.append(f"F {{rel}} {{oct(os.stat(full).st_mode & 0o777)}} {{f.read()!r}}")
    return "\\n".join(sorted(lines)) + "\\n"


rule all:
    input:
{all_inputs}

'''

HELPER = '''\
import os

SALT = {helper}


def read_any(path):
    """A file's text, or a directory's whole listing (names, kinds, links, modes, bytes)."""
    if not os.path.isdir(path) or os.path.islink(path):
        with open(path) as f:
            return f.read()
    lines = []
    for root, dirs, files in os.walk(path):
        for name in sorted(dirs + files):
            full = os.path.join(root, name)
            rel = os.path.relpath(full, path)
            if os.path.islink(full):
                lines.append(f"L {{rel}} -> {{os.readlink(full)}}")
            elif os.path.isdir(full):
                lines.append(f"D {{rel}} {{oct(os.stat(full).st_mode & 0o777)}}")
            else:
                with open(full) as f:
                    lines.append(f"F {{rel}} {{oct(os.stat(full).st_mode & 0o777)}} {{f.read()!r}}")
    return "\\n".join(sorted(lines)) + "\\n"


def digest(text):
    return f"{{len(text)}}:{{sum(map(ord, text)) % 9973}}:{{SALT}}"
'''

TEMPLATES = '''\
"""Templates of the generated workflow; their state comes from a helper module."""

from stickyinvoc import template

import tmplhelp

VERSION = {template}


@template("t0")
def t0():
    return {{"salt": f"t0-{{tmplhelp.SALT}}-{{VERSION}}"}}


@template("t1")
def t1():
    return {{"salt": f"t1-{{tmplhelp.SALT}}-{{VERSION}}"}}
'''


def render(spec: Spec, wd: Path) -> None:
    """Write the workflow of ``spec`` into ``wd`` (and its outside inputs), replacing what the
    previous round wrote; unchanged files keep their content."""
    wd.mkdir(parents=True, exist_ok=True)
    (wd / "scripts").mkdir(exist_ok=True)
    finals = []
    rules = []
    for sub in spec.subs:
        _write(wd / f"data/{sub.prefix}/in.txt", f"{sub.prefix} data {sub.data}\n")
        for path, version in sub.outside.items():
            _write(Path(path), f"{sub.prefix} outside {version}\n")
        _write(wd / f"scripts/{sub.prefix}_help.py", HELPER.format(helper=sub.helper))
        for node in sub.nodes:
            if not node.temp:
                finals.append(sub.out(node))
            rules.append(_rule(sub, node))
            if node.kind in ("script", "sticky"):
                _write(wd / f"scripts/{sub.prefix}_{node.name}.py", _script(sub, node))
    all_inputs = "\n".join(f'        "{p}",' for p in finals)
    _write(wd / "Snakefile", SNAKEFILE_HEAD.format(all_inputs=all_inputs) + "\n\n".join(rules))
    _write(wd / "sticky_templates.py", TEMPLATES.format(template=spec.template))
    _write(wd / "tmplhelp.py", f"SALT = {spec.template_helper}\n")
    _write(wd / "config.json", json.dumps(spec.config, indent=1, sort_keys=True))


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _rule(sub: Sub, node: Node) -> str:
    out = sub.out(node)
    output = f'temp("{out}")' if node.temp else f'"{out}"'
    if node.kind == "dir":
        output = f'temp(directory("{out}"))' if node.temp else f'directory("{out}")'
    lines = [f"rule {sub.prefix}_{node.name}:"]
    lines += ["    input:", *(f'        "{p}",' for p in node.inputs)]
    lines += ["    output:", f"        {output},"]
    lines += ["    params:", f"        p={node.param},", f"        unused={node.unused},"]
    if node.shadow:
        lines.append('    shadow: "minimal"')
    if node.kind == "sticky":
        lines += ["    resources:", f'        sticky="t{sub.index % 2}",']
    tag = f"{sub.prefix}.{node.name}.v{node.variant}"
    if node.kind == "shell":
        config = f" c={{config[{node.config_key}]}}" if node.config_key else ""
        cmd = f'(cat {{input}}; echo "{tag} p={{params.p}}{config}") > {{output}}'
        if node.comment:
            cmd = f": comment {node.comment}; " + cmd
        lines += ["    shell:", f"        {cmd!r}"]
    elif node.kind == "link":
        target = os.path.relpath(node.link_to or "", f"res/{sub.prefix}")
        cmd = f"ln -s {target} {{output}}"
        if node.comment or node.variant:
            cmd = f": comment {node.comment} {node.variant}; " + cmd
        lines += ["    shell:", f"        {cmd!r}"]
    elif node.kind == "dir":
        cmd = (
            f"mkdir -p {{output}}/sub {{output}}/empty{node.empty}; "
            f'(cat {{input}}; echo "{tag} p={{params.p}}") > {{output}}/sub/f.txt; '
            "chmod 640 {output}/sub/f.txt; ln -s sub/f.txt {output}/alias"
        )
        if node.comment:
            cmd = f": comment {node.comment}; " + cmd
        lines += ["    shell:", f"        {cmd!r}"]
    elif node.kind == "run":
        lines += [
            "    run:",
            f"        # comment {node.comment}",
            '        text = "".join(_read_any(p) for p in input)',
            '        with open(output[0], "w") as f:',
            f'            f.write(text + "{tag} p=" + str(params.p) + "\\n")',
        ]
    else:
        lines += ["    script:", f'        "scripts/{sub.prefix}_{node.name}.py"']
    return "\n".join(lines) + "\n"


def _script(sub: Sub, node: Node) -> str:
    tag = f"{sub.prefix}.{node.name}.v{node.variant}"
    body = [f"# comment {node.comment}", f"from {sub.prefix}_help import digest, read_any", ""]
    if node.kind == "sticky":
        body += ["import stickyinvoc", "", "state = stickyinvoc.state(snakemake)"]
        salt = 'state["salt"]'
    else:
        salt = '"plain"'
    config = f'snakemake.config["{node.config_key}"]' if node.config_key else '"-"'
    body += [
        f"config = {config}",
        f"salt = {salt}",
        'text = "".join(read_any(p) for p in snakemake.input)',
        'with open(snakemake.output[0], "w") as f:',
        f'    f.write(text + f"{tag} p={{snakemake.params.p}} c={{config}} "',
        '            f"s={salt} h={digest(text)}\\n")',
    ]
    return "\n".join(body) + "\n"


# ---- running and comparing ----------------------------------------------------------------


def clone(master: Path, to: Path) -> Path:
    shutil.copytree(master, to, ignore=shutil.ignore_patterns(".snakemake", "res", "__pycache__"))
    return to


def snakemake(wd: Path, *args: str, timeout: float = 600) -> str:
    cmd = [
        sys.executable,
        "-m",
        "snakemake",
        "--executor",
        "sticky",
        "--cores",
        "2",
        "--nocolor",
        "--configfile",
        "config.json",
        "--scheduler",
        "greedy",
        *args,
    ]
    proc = subprocess.run(cmd, cwd=wd, capture_output=True, text=True, timeout=timeout)
    out = proc.stdout + proc.stderr
    if proc.returncode != 0:
        raise RuntimeError(f"snakemake failed in {wd}:\n{out[-6000:]}")
    return out


_RULE = re.compile(r"^\s*(?:local)?rule (w\d+_n\d+):$", re.M)
_RESTORED = re.compile(r"^Restored .* from checkpoint \w+ \(rule (w\d+_n\d+)\)$", re.M)


def ran_jobs(log: str) -> set[str]:
    """The jobs (one per rule here) that really ran: scheduled, and not restored when about
    to run (an early cutoff)."""
    return set(_RULE.findall(log)) - set(_RESTORED.findall(log))


def listing(path: Path) -> Any:
    """What a path is, recursively: kind, mode, bytes, link target."""
    if not os.path.lexists(path):
        return None
    info = path.lstat()
    if stat.S_ISLNK(info.st_mode):  # its target, and what a reader gets through it
        led_to = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
        return ["link", os.readlink(path), led_to]
    mode = stat.S_IMODE(info.st_mode)
    if stat.S_ISDIR(info.st_mode):
        return ["dir", mode, {p.name: listing(p) for p in sorted(path.iterdir())}]
    return ["file", mode, hashlib.sha256(path.read_bytes()).hexdigest()]


def dependencies(spec: Spec, sub: Sub, node: Node, master: Path, fresh: Path) -> str:
    """A job's dependencies as the key documents them (see the module docstring)."""
    parts: dict[str, Any] = {"rule": _rule(sub, node).replace("temp(", "(")}
    whole_config = node.kind == "run"
    if node.kind in ("script", "sticky"):
        source = _script(sub, node)
        parts["script"] = source
        parts["helper"] = (master / f"scripts/{sub.prefix}_help.py").read_text()
        keys = script_config_reads(source)
        whole_config = whole_config or keys is None
        if keys:
            parts["config"] = {k: spec.config.get(k) for k in sorted(keys)}
    if node.kind == "sticky":
        parts["template"] = [spec.template, spec.template_helper]
    if node.kind == "shell" and node.config_key:
        keys = shell_config_reads(f"{{config[{node.config_key}]}}")
        parts["config"] = {k: spec.config.get(k) for k in sorted(keys or ())}
    if whole_config:
        parts["whole config"] = spec.config
    inputs = {}
    for path in node.inputs:
        where = (
            Path(path)
            if os.path.isabs(path)
            else (fresh if path.startswith("res/") else master) / path
        )
        inputs[path] = listing(where)
    parts["inputs"] = inputs
    return json.dumps(parts, sort_keys=True, default=str)


@dataclass
class RoundResult:
    cases: int = 0
    divergences: list[str] = field(default_factory=list)
    unnecessary: list[str] = field(default_factory=list)
    ran: int = 0
    restored_jobs: int = 0
    edits: dict[str, int] = field(default_factory=dict)


def compare(spec: Spec, store_site: Path, fresh: Path, edits: dict[int, str]) -> list[str]:
    """The divergences of one round: every output of every sub-workflow, by kind, mode,
    bytes and link target; temp() outputs must be gone at the store site."""
    found = []
    for sub in spec.subs:
        for node in sub.nodes:
            out = sub.out(node)
            here = listing(store_site / out)
            if node.temp:
                if here is not None:
                    found.append(f"{out} (temp) left at the store site [{edits.get(sub.index)}]")
                continue
            there = listing(fresh / out)
            if here != there:
                found.append(
                    f"{out} differs [{edits.get(sub.index)}]: store site {here} fresh {there}"
                )
    return found


class Differential:
    """Rounds of edit, store-site run, fresh run, comparison."""

    def __init__(
        self,
        base: Path,
        seed: int,
        n_subs: int,
        kinds: tuple[str, ...] = EDITS,
        global_kinds: tuple[str, ...] = GLOBAL_EDITS,
        global_every: int = 4,
        twins: bool = False,
    ) -> None:
        self.base = base
        self.rng = random.Random(seed)
        self.kinds, self.global_kinds, self.global_every = kinds, global_kinds, global_every
        self.spec = generate(self.rng, n_subs, base / "outside", twins)
        self.master = base / "master"
        self.store = base / "store"
        self.round = 0
        self.previous: dict[str, str] = {}
        render(self.spec, self.master)

    def run_round(self) -> RoundResult:
        result = RoundResult()
        edits: dict[int, str] = {}
        if self.round > 0:
            for sub in self.spec.subs:
                edits[sub.index] = edit_one(self.rng, self.spec, sub, self.kinds)
            if self.global_kinds and self.round % self.global_every == 0:
                # In turn, so that a short run (the CI test) has every kind.
                turn = self.round // self.global_every - 1
                kind = self.global_kinds[turn % len(self.global_kinds)]
                if kind == "template":
                    self.spec.template += 1
                else:
                    self.spec.template_helper += 1
                edits = {i: f"{e}+{kind}" for i, e in edits.items()}
            render(self.spec, self.master)
        site = clone(self.master, self.base / f"store-site-{self.round}")
        log = snakemake(site, "--verbose", "--sticky-checkpoints", str(self.store))
        fresh = clone(self.master, self.base / f"fresh-{self.round}")
        snakemake(fresh, "--notemp")
        result.divergences = compare(self.spec, site, fresh, edits)
        ran = ran_jobs(log)
        result.ran = len(ran)
        current = {
            f"{sub.prefix}_{node.name}": dependencies(self.spec, sub, node, self.master, fresh)
            for sub in self.spec.subs
            for node in sub.nodes
        }
        if self.round > 0:
            result.cases = len(self.spec.subs)
            for kind in edits.values():
                result.edits[kind] = result.edits.get(kind, 0) + 1
            for job in sorted(ran):
                if current[job] == self.previous.get(job):
                    index = int(job[1:].split("_")[0])
                    result.unnecessary.append(f"{job} [{edits.get(index)}]")
        result.restored_jobs = len(current) - len(ran)
        self.previous = current
        # Only the latest sites are needed (the fresh one for the next round's model).
        for old in self.base.glob("*-site-*"):
            if old != site:
                shutil.rmtree(old, ignore_errors=True)
        for old in self.base.glob("fresh-*"):
            if old != fresh:
                shutil.rmtree(old, ignore_errors=True)
        self.round += 1
        return result


def describe(spec: Spec) -> str:
    """The generated workflow in a line per sub-workflow (for a failure message)."""
    return "\n".join(
        textwrap.shorten(
            f"{sub.prefix}: "
            + ", ".join(
                f"{n.name}={n.kind}{'/temp' if n.temp else ''}{'/shadow' if n.shadow else ''}"
                f"<{','.join(n.inputs)}"
                for n in sub.nodes
            ),
            300,
        )
        for sub in spec.subs
    )
