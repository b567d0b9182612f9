"""The default-name counters (``_names``): a job's threads, pools and processes are numbered
as in a fresh process that built the same template; coverage from the standard library's
own source."""

import ast
import concurrent.futures
import multiprocessing
import multiprocessing.process
import sysconfig
import threading
from pathlib import Path

from snakemake_executor_plugin_sticky._names import COUNTERS, OTHER_COUNTERS, Names, NameWatch

_SKIPPED = ("test", "idlelib", "site-packages", "turtledemo", "lib2to3")


def _is_count(node: ast.AST) -> bool:
    """``count(...)``, ``itertools.count(...)``, ``_count(...)``, optionally ``.__next__``."""
    if isinstance(node, ast.Attribute) and node.attr == "__next__":
        node = node.value
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    return name in ("count", "_count")


def stdlib_counters() -> set[str]:
    """Every module- or class-level ``NAME = count(...)`` of the standard library, as
    ``module.NAME`` or ``module.Class.NAME``."""
    root = Path(sysconfig.get_paths()["stdlib"])
    found = set()
    for path in root.rglob("*.py"):
        relative = path.relative_to(root)
        if relative.parts[0] in _SKIPPED:
            continue
        source = path.read_bytes()
        if b"count(" not in source:
            continue
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        module = ".".join(relative.with_suffix("").parts).removesuffix(".__init__")
        scopes = [(module, tree.body)]
        scopes += [(f"{module}.{c.name}", c.body) for c in tree.body if isinstance(c, ast.ClassDef)]
        for prefix, body in scopes:
            for statement in body:
                if isinstance(statement, ast.Assign) and _is_count(statement.value):
                    for target in statement.targets:
                        if isinstance(target, ast.Name):
                            found.add(f"{prefix}.{target.id}")
    return found


def _qualified(counter) -> str:
    return ".".join(filter(None, (counter.module, counter.owner, counter.attribute)))


def test_every_stdlib_counter_is_classified():
    found = stdlib_counters()
    assert "threading._counter" in found and "weakref.finalize._index_iter" in found  # it reads
    named = {_qualified(c) for c in COUNTERS}
    missing = sorted(found - named - OTHER_COUNTERS.keys())
    assert not missing, f"classify these in _names.COUNTERS or OTHER_COUNTERS: {missing}"
    assert not sorted((named | OTHER_COUNTERS.keys()) - found)  # no stale entry


def _names_now() -> list[str]:
    t = threading.Thread(target=print)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        prefix = pool._thread_name_prefix
    process = multiprocessing.get_context("fork").Process(target=print)
    return [t.name, prefix, process.name]


def test_a_job_counts_from_the_first_value_plus_what_its_build_used():
    names = Names()
    with NameWatch() as watch:  # a build that makes two threads and one thread pool
        threading.Thread(target=print)
        threading.Thread(target=print)
        concurrent.futures.ThreadPoolExecutor(1).shutdown()
    assert watch.used == {"threading": 2, "concurrent.futures.thread": 1}
    names.built("t", watch.used)
    _names_now()  # the worker's own numbering goes on meanwhile
    held = threading._counter
    names.start("t")
    assert _names_now() == ["Thread-3 (print)", "ThreadPoolExecutor-1", "ForkProcess-1"]
    names.start("t")  # a benchmark's next repeat: the same names again
    assert _names_now() == ["Thread-3 (print)", "ThreadPoolExecutor-1", "ForkProcess-1"]
    names.start("other")  # a template whose build named nothing
    assert _names_now() == ["Thread-1 (print)", "ThreadPoolExecutor-0", "ForkProcess-1"]
    names.end()  # direct mode: the worker's own counter objects back in place
    assert threading._counter is held
    assert type(multiprocessing.process._process_counter).__name__ == "count"


def test_an_unreadable_counter_is_left_alone():
    saved = threading._counter
    threading._counter = lambda: 7  # a patched counter: not an itertools.count
    try:
        assert COUNTERS[0].next_value() is None
        with NameWatch() as watch:
            pass
        assert "threading" not in watch.used
    finally:
        threading._counter = saved
